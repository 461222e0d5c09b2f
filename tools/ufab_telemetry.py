"""Client of ufab-edge's DPDK telemetry socket (python3 standard library only).

The socket is the EAL's v2 telemetry socket, <runtime dir>/<file-prefix>/dpdk_telemetry.v2
(SOCK_SEQPACKET): on connect the server sends {"version", "pid", "max_output_len"}; each
request is a command, optionally ",PARAMS"; each reply is {"<command>": value}. An unknown
command, or a callback that failed, answers {"<command>": null}. The /ufab/* commands are
listed in pipeline/telemetry.hpp and docs (the telemetry contract in README "Operating ufab").

Used by ufabctl and ufab-exporter; it never interprets more than the wire needs
(normalize() turns the numbers ufab-edge sends as strings into numbers).
"""

import json
import os
import re
import socket

SOCKET_NAME = "dpdk_telemetry.v2"


class TelemetryError(Exception):
    """A failure with a message that says what is wrong and what to check."""


def runtime_dirs():
    """Where DPDK 22.11 puts <file-prefix>/ (eal_get_runtime_dir): /var/run/dpdk as root,
    else $XDG_RUNTIME_DIR/dpdk or /tmp/dpdk."""
    if os.geteuid() == 0:
        return ["/var/run/dpdk"]
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    return [os.path.join(xdg, "dpdk") if xdg else "/tmp/dpdk", "/var/run/dpdk"]


def socket_path(file_prefix):
    """The first existing socket of that prefix, else the one DPDK would create."""
    cands = [os.path.join(d, file_prefix, SOCKET_NAME) for d in runtime_dirs()]
    for c in cands:
        if os.path.exists(c):
            return c
    return cands[0]


_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^[-+]?(inf|nan)$")


def number(v):
    """A telemetry value as a number: ints stay ints, "%.6g" strings become floats."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, str) and _NUMBER.match(v.strip()):
        v = v.strip()
        return int(v) if re.match(r"^[-+]?\d+$", v) else float(v)
    raise ValueError(f"not a number: {v!r}")


def parse_path_entry(v):
    """A /ufab/paths entry: "udp_src=49152 active_pairs=0 labels=1,2" (or a dict, as is)."""
    if isinstance(v, dict):
        return normalize(v)
    out = {}
    for part in str(v).split():
        key, _, val = part.partition("=")
        if key == "labels":
            out[key] = [int(x) for x in val.split(",") if x != ""]
        else:
            try:
                out[key] = number(val)
            except ValueError:
                out[key] = val
    return out


def parse_sample(v):
    """A history sample: "t_ns=1,window_bytes=2,rate_bps=3,path=0" (or a dict, as is)."""
    if isinstance(v, dict):
        return normalize(v)
    out = {}
    for part in str(v).split(","):
        key, _, val = part.partition("=")
        try:
            out[key.strip()] = number(val)
        except ValueError:
            out[key.strip()] = val
    return out


def normalize(v):
    """Numeric strings to numbers, recursively; other strings unchanged."""
    if isinstance(v, dict):
        return {k: normalize(x) for k, x in v.items()}
    if isinstance(v, list):
        return [normalize(x) for x in v]
    if isinstance(v, str):
        try:
            return number(v)
        except ValueError:
            return v
    return v


class Client:
    """One connection to the telemetry socket of a running ufab-edge."""

    def __init__(self, file_prefix="rte", path=None, timeout=5.0):
        self.file_prefix = file_prefix
        self.path = path or socket_path(file_prefix)
        self.timeout = timeout
        self.sock = None
        self.info = None
        self._commands = None

    def _where(self):
        if self.path == socket_path(self.file_prefix):
            return f"is ufab-edge running with --file-prefix {self.file_prefix}?"
        return "is ufab-edge running, and is this its --file-prefix directory?"

    def connect(self):
        if self.sock is not None:
            return self
        if not os.path.exists(self.path):
            raise TelemetryError(f"no telemetry socket at {self.path}: {self._where()}")
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(self.timeout)
        try:
            s.connect(self.path)
        except ConnectionRefusedError:
            s.close()
            raise TelemetryError(f"{self.path} refuses connections (a stale socket: the process that made it "
                                 f"has exited): {self._where()}") from None
        except PermissionError:
            s.close()
            raise TelemetryError(f"permission denied on {self.path}: run as the user that runs ufab-edge "
                                 "(root for /var/run/dpdk)") from None
        except OSError as e:
            s.close()
            raise TelemetryError(f"cannot connect to {self.path}: {e.strerror or e}") from None
        self.sock = s
        try:
            self.info = json.loads(self._recv())
        except (ValueError, TelemetryError) as e:
            self.close()
            raise TelemetryError(f"{self.path} is not a DPDK v2 telemetry socket ({e})") from None
        return self

    def close(self):
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        self._commands = None  # a restarted ufab-edge may know other commands

    def __enter__(self):
        return self.connect()

    def __exit__(self, *exc):
        self.close()

    def _recv(self):
        size = max(16384, int((self.info or {}).get("max_output_len", 16384))) + 1024
        try:
            data = self.sock.recv(size)
        except socket.timeout:
            raise TelemetryError(f"no answer from {self.path} within {self.timeout:g} s") from None
        if not data:
            raise TelemetryError(f"{self.path} closed the connection (ufab-edge exited, or too many clients)")
        return data.decode("utf-8", "replace")

    def raw(self, cmd, params=None):
        """Sends "cmd[,params]"; returns the value of the reply's single key (None for null)."""
        self.connect()
        text = cmd if params is None or params == "" else f"{cmd},{params}"
        try:
            self.sock.send(text.encode())
        except OSError as e:
            raise TelemetryError(f"cannot send to {self.path}: {e.strerror or e}") from None
        reply = self._recv()
        try:
            obj = json.loads(reply)
        except ValueError:
            raise TelemetryError(f"{cmd}: the reply is not JSON (truncated at max_output_len?): "
                                 f"{reply[:120]!r}") from None
        if not isinstance(obj, dict) or len(obj) != 1:
            raise TelemetryError(f"{cmd}: unexpected reply {reply[:120]!r}")
        return next(iter(obj.values()))

    def commands(self):
        if self._commands is None:
            self._commands = set(self.raw("/") or [])
        return self._commands

    def call(self, cmd, params=None):
        """Like raw(), but a null reply becomes an error that says why, and an
        {"ok": false, "error": ...} reply raises with ufab-edge's own message."""
        v = self.raw(cmd, params)
        if v is None:
            cmds = self.commands()
            if not any(c.startswith("/ufab/") for c in cmds):
                raise TelemetryError(f"the DPDK process at {self.path} is not ufab-edge (it has no /ufab/ commands)")
            if cmd not in cmds:
                raise TelemetryError(f"this ufab-edge does not know {cmd} (it is older than ufabctl; "
                                     f"it has: {', '.join(sorted(c for c in cmds if c.startswith('/ufab/')))})")
            shown = cmd if params is None else f"{cmd},{params}"
            raise TelemetryError(f"{shown}: ufab-edge returned nothing (a bad parameter, or its worker did not "
                                 "answer within 1 s)")
        if isinstance(v, dict) and v.get("ok") in (False, 0, "0", "false"):
            # DPDK 22.11 strings hold 127 characters: a long message goes on in error_2, error_3, ...
            parts = [v.get("error", "")] + [v[k] for k in sorted((k for k in v if re.match(r"^error_\d+$", k)),
                                                                    key=lambda k: int(k[6:]))]
            raise TelemetryError(f"{cmd}: {''.join(parts) or 'failed (no error message)'}")
        return v

    # The /ufab/* commands, normalized.
    def stats(self):
        return normalize(self.call("/ufab/stats"))

    def tenants(self):
        return normalize(self.call("/ufab/tenants"))

    def paths(self):
        out = {}
        for host, h in self.call("/ufab/paths").items():
            entry = {}
            for k, v in h.items():
                entry[k] = parse_path_entry(v) if k.startswith("path") and k[4:].isdigit() else normalize(v)
            out[host] = entry
        return out

    def pairs(self, first=0, limit=None):
        """All pairs with index >= `first`, at most `limit`. /ufab/pairs,FIRST answers up to 32
        pairs from index FIRST on and "next_first" when more follow. A reply that DPDK cut at
        max_output_len (16 KB; older ufab-edge sent 64 pairs a page, about 59 fit) is also
        handled: the next request starts at the smallest index not received yet, until a
        request brings nothing new."""
        out, seen = {}, set()
        while limit is None or len(out) < limit:
            page = normalize(self.call("/ufab/pairs", str(first)))
            nxt = page.pop("next_first", None)
            new = 0
            for k, v in page.items():
                idx = v.get("index") if isinstance(v, dict) else None
                if k in out or (idx is not None and idx < first):
                    continue
                if limit is not None and len(out) >= limit:
                    break
                out[k] = v
                new += 1
                if idx is not None:
                    seen.add(idx)
            if isinstance(nxt, int) and nxt > first:
                first = nxt
                continue
            if new == 0:
                break
            while first in seen:
                first += 1
        return out

    def pair(self, index):
        """One pair; its "history" samples as dicts. DPDK 22.11 nests containers one level,
        so ufab-edge sends each sample as "t_ns=..,window_bytes=..,rate_bps=..,path=.."."""
        p = normalize(self.call("/ufab/pair", str(index)))
        body = next(iter(p.values())) if len(p) == 1 and isinstance(next(iter(p.values())), dict) else p
        if isinstance(body.get("history"), list):
            body["history"] = [parse_sample(h) for h in body["history"]]
        return p

    def workers(self):
        return normalize(self.call("/ufab/workers"))

    def tenant_set(self, vni, gbps):
        return normalize(self.call("/ufab/tenant_set", f"{vni},{gbps:g}"))

    def tenant_class(self, vni, cls):
        """cls: 0..7, or 'auto' (the class follows the guarantee)."""
        return normalize(self.call("/ufab/tenant_class", f"{vni},{cls}"))

    def path_drain(self, host, path, undrain=False):
        return normalize(self.call("/ufab/path_undrain" if undrain else "/ufab/path_drain", f"{host},{path}"))

    def reload(self):
        return normalize(self.call("/ufab/reload"))

    def port_add(self, devargs):
        """Attaches a VM-side port (ufab-edge --spare-ports), e.g. "net_vhost3,iface=/run/vm3.sock"."""
        return normalize(self.call("/ufab/port_add", devargs))

    def port_remove(self, port):
        return normalize(self.call("/ufab/port_remove", str(port)))
