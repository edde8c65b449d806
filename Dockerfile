# The pulse worker image used by docker-compose.yml (service pulse-worker). Two stages: the build stage compiles
# TypeScript and prebuilds the workflow bundle (so the worker never runs webpack at start); the runtime stage holds
# only production packages, the compiled dist/ and the data files the activities read (node scripts, profiles).
FROM node:20.20.2-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY tsconfig.json ./
COPY bin ./bin
COPY cli ./cli
COPY runtime ./runtime
COPY workflows ./workflows
COPY activities ./activities
COPY worker ./worker
# test/ and bench/ stay out of the image; tsc skips include folders that are absent.
RUN npx tsc && node dist/worker/build-bundle.js

FROM node:20.20.2-bookworm-slim
# openssh-client: node targets resolve through `ssh -G` (PULSE_SSH_CONFIG), as on a controller host.
RUN apt-get update \
 && apt-get install -y --no-install-recommends openssh-client ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --loglevel=error
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY runtime ./runtime
COPY overlays ./overlays
# The state volume is mounted at /var/lib/pulse; creating it here gives a fresh named volume the node user's
# ownership. node (uid 1000) is the image's own unprivileged user.
RUN mkdir -p /var/lib/pulse/runtime /home/node/.ssh && chown -R node:node /var/lib/pulse /home/node
USER node
ENV PULSE_STATE_DIR=/var/lib/pulse/runtime
# SIGTERM starts the worker's graceful shutdown; compose's stop_grace_period covers its grace time.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "/app/bin/pulse-cli"]
CMD ["worker"]
