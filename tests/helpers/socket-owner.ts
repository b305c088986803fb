/**
 * Which local process opened a TCP connection, seen from the server that accepted it (Linux):
 * the client's end is found in /proc/net/tcp by its two ports, which gives its socket inode, and
 * the process is the one of `pids` with that socket among its open files. Asked when the server
 * accepts the connection, while the client still holds it. Lets a test site tell apart the
 * requests of several Quarry processes that fetch the same URLs.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

function clientInode(clientPort: number, serverPort: number): string | null {
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const local = parseInt(f[1]!.split(":").pop()!, 16);
      const remote = parseInt(f[2]!.split(":").pop()!, 16);
      if (local === clientPort && remote === serverPort) return f[9]!;
    }
  }
  return null;
}

/** The pid among `pids` holding the client end of the connection from `clientPort` to `serverPort`; null when none does. */
export function connectionOwner(clientPort: number, serverPort: number, pids: number[]): number | null {
  const inode = clientInode(clientPort, serverPort);
  if (!inode) return null;
  const want = `socket:[${inode}]`;
  for (const pid of pids) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // exited
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === want) return pid;
      } catch {
        // closed meanwhile
      }
    }
  }
  return null;
}
