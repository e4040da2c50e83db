"""Run a command on a pseudo-terminal and render what a terminal would show (progress bars included).

``render`` is a minimal terminal: printable text, carriage return, newline, cursor up (``ESC[nA``) and
erase to end of line (``ESC[K``); other escape sequences are ignored. Enough for tqdm's bars.
"""

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import termios


def run_in_pty(argv, env, cols=120, rows=50, timeout=120):
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    p = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    out = b""
    while True:
        r, _, _ = select.select([master], [], [], timeout)
        if not r:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    p.wait()
    os.close(master)
    return p.returncode, out.decode("utf-8", "replace")


def render(text, cols=120):
    """A minimal terminal: printable text, \\r, \\n, ESC[nA (up), ESC[K/ESC[2K (erase); other CSI ignored."""
    screen, row, col = [[]], 0, 0
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\x1b":
            m = re.match(r"\x1b\[(\??[0-9;]*)([A-Za-z])", text[i:])
            if m:
                n = int(m.group(1) or 1) if m.group(1).isdigit() or not m.group(1) else 1
                if m.group(2) == "A":
                    row = max(0, row - n)
                elif m.group(2) == "K":
                    del screen[row][col:]
                i += m.end()
                continue
        if ch == "\r":
            col = 0
        elif ch == "\n":
            row += 1
            col = 0
            while len(screen) <= row:
                screen.append([])
        else:
            line = screen[row]
            while len(line) < col:
                line.append(" ")
            if col < len(line):
                line[col] = ch
            else:
                line.append(ch)
            col += 1
        i += 1
    return ["".join(l).rstrip() for l in screen]
