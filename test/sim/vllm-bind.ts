/**
 * vLLM binds its port before it loads the model (vllm/entrypoints/openai/api_server.py, create_server_socket:
 * SO_REUSEADDR and SO_REUSEPORT, then bind; uvicorn calls listen only once the app serves). Node 20 cannot set
 * SO_REUSEPORT, so the simulated container starts under this small perl step that makes that socket the same
 * way, leaves it open across exec as SIM_VLLM_FD (or says SIM_VLLM_BIND_ERROR), and execs the simulated vLLM:
 * the pid stays the same, and a stray server of the same user can share the port exactly as it can on a node.
 */

export const BIND_PL = String.raw`
use strict; use Socket qw(:all); use Fcntl;
my @cmd = @ARGV; my ($host, $port) = ('', 8000);
for (my $i = 0; $i < @cmd; $i++) {
  if ($cmd[$i] =~ /^--(host|port)=(.*)$/) { if ($1 eq 'host') { $host = $2 } else { $port = $2 } }
  elsif ($cmd[$i] eq '--host' && $i + 1 < @cmd) { $host = $cmd[$i + 1] }
  elsif ($cmd[$i] eq '--port' && $i + 1 < @cmd) { $port = $cmd[$i + 1] }
}
my $v6 = $host =~ /:/;
socket(my $s, $v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0) or die "socket: $!";
setsockopt($s, SOL_SOCKET, SO_REUSEADDR, 1);
setsockopt($s, SOL_SOCKET, 15, 1); # SO_REUSEPORT on Linux
my $addr = $v6 ? pack_sockaddr_in6($port, inet_pton(AF_INET6, $host)) : pack_sockaddr_in($port, $host eq '' ? INADDR_ANY : (inet_aton($host) // INADDR_NONE));
if (bind($s, $addr)) { fcntl($s, F_SETFD, 0); $ENV{SIM_VLLM_FD} = fileno($s); }
else { $ENV{SIM_VLLM_BIND_ERROR} = '[Errno ' . ($! + 0) . "] $!"; }
exec { $cmd[0] } @cmd or die "exec: $!";
`;

/** argv (program first) that binds like vLLM, then runs `cmd` with the socket inherited. */
export function bindThenExec(cmd: string[]): string[] {
  return ['perl', '-e', BIND_PL, '--', ...cmd];
}
