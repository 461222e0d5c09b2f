#!/usr/bin/env python3
"""Replays the conformance vectors through bmv2 simple_switch (v1model twin).

Per case: start simple_switch on veth pairs (port i <-> veth pair ufabNa/ufabNb),
apply runtime.txt and the CRC parameters, load state_in.json into registers,
then walk case.json's events: send each in.pcap packet on its in_port (raw
AF_PACKET socket) and collect what leaves; a "tick" runs the aging rule of
p4/model (epoch = now / period; free slots with epoch < current - 1). Checks:
out packets per port equal out.pcap (the q and tx fields of records stamped by
this switch are masked: bmv2 reports queues in packets and its clock is not
the vector's), and the Φ_l/W_l/slot/epoch registers equal state_out.json.
Exit 0 on a match, 1 on a mismatch."""
import argparse, json, os, socket, struct, subprocess, sys, time

CRC = [("0x04c11db7", "0xffffffff", "0xffffffff", "true", "true"),    # bank 0: CRC-32
       ("0x1edc6f41", "0xffffffff", "0xffffffff", "true", "true"),    # bank 1: CRC-32C
       ("0x814141ab", "0x00000000", "0x00000000", "false", "false")]  # fingerprint: CRC-32Q


def read_pcap(path):
    data = open(path, "rb").read()
    nano = struct.unpack("<I", data[:4])[0] == 0xA1B23C4D
    off, out = 24, []
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack("<IIII", data[off:off + 16])
        out.append(data[off + 16: off + 16 + incl])
        off += 16 + incl
    assert nano, path
    return out


def mask_stamped(frame):
    """Zero tx and q of every hop record (offsets from docs/wire-format.md)."""
    b = bytearray(frame)
    if len(b) < 52 or b[12:14] != b"\x08\x00" or b[23] != 17 or (b[42] & 0xF) != 1:
        return bytes(b)
    msg = 50 + 2 + 2 * b[50]
    n_hop = b[msg] & 0xF
    for i in range(n_hop):
        r = msg + 32 + 16 * i
        if r + 14 <= len(b):
            b[r + 8:r + 14] = bytes(6)
    return bytes(b)


class Cli:
    def __init__(self, thrift_port):
        self.port = thrift_port

    def run(self, cmds):
        p = subprocess.run(["simple_switch_CLI", "--thrift-port", str(self.port)], input="\n".join(cmds) + "\n",
                           capture_output=True, text=True, check=True)
        return p.stdout

    def read(self, reg, idx):
        out = self.run([f"register_read {reg} {idx}"])
        for line in out.splitlines():
            if "=" in line and reg in line:
                return int(line.split("=")[-1].strip())
        raise RuntimeError(f"cannot read {reg}[{idx}]: {out}")


def slot_index(cfg, port, s):
    per_port = 2 * cfg["buckets_per_bank"] * cfg["ways"]
    return port * per_port + (s["bank"] * cfg["buckets_per_bank"] + s["bucket"]) * cfg["ways"] + s["way"]


def load_state(cli, cfg, st):
    cmds = [f"register_write epoch 0 {st['epoch']}"]
    for p in st["ports"]:
        i = p["port"]
        cmds += [f"register_write port_up {i} {1 if p['up'] else 0}", f"register_write cap_code {i} {p['cap_code']}",
                 f"register_write phi_sum {i} {p['phi_sum']}", f"register_write w_sum {i} {p['w_sum']}"]
        for s in p["slots"]:
            k = slot_index(cfg, i, s)
            cmds += [f"register_write slot_tag {k} {(1 << 24) | s['fp']}", f"register_write slot_phi {k} {s['phi']}",
                     f"register_write slot_w {k} {s['w']}", f"register_write slot_epoch {k} {s['epoch']}"]
    cli.run(cmds)


def age(cli, cfg, n_ports, period, now, state):
    e = now // period
    if e <= state["epoch"]:
        return
    state["epoch"] = e
    cli.run([f"register_write epoch 0 {e}"])
    if e < 2:
        return
    per_port = 2 * cfg["buckets_per_bank"] * cfg["ways"]
    for p in range(n_ports):
        for k in range(p * per_port, (p + 1) * per_port):
            if cli.read("slot_tag", k) and cli.read("slot_epoch", k) < e - 1:
                phi, w = cli.read("slot_phi", k), cli.read("slot_w", k)
                cli.run([f"register_write phi_sum {p} {cli.read('phi_sum', p) - phi}",
                         f"register_write w_sum {p} {cli.read('w_sum', p) - w}",
                         f"register_write slot_tag {k} 0", f"register_write slot_phi {k} 0",
                         f"register_write slot_w {k} 0", f"register_write slot_epoch {k} 0"])


def run_case(args, case_dir, crc_names, n_ports):
    case = json.load(open(os.path.join(case_dir, "case.json")))
    cfg = case["config"]
    ins, outs = read_pcap(os.path.join(case_dir, "in.pcap")), read_pcap(os.path.join(case_dir, "out.pcap"))
    ifs = []
    for i in range(n_ports):
        subprocess.run(["ip", "link", "del", f"ufab{i}a"], capture_output=True)
        subprocess.run(["ip", "link", "add", f"ufab{i}a", "type", "veth", "peer", "name", f"ufab{i}b"], check=True)
        for end in "ab":
            subprocess.run(["ip", "link", "set", f"ufab{i}{end}", "up"], check=True)
        ifs += ["-i", f"{i}@ufab{i}a"]
    log = open(os.path.join(args.work, os.path.basename(case_dir) + ".log"), "w")
    sw = subprocess.Popen(["simple_switch", "--thrift-port", "9090", *ifs, args.json], stdout=log, stderr=log)
    try:
        time.sleep(2)
        cli = Cli(9090)
        cli.run([l for l in open(args.runtime).read().splitlines() if l and not l.startswith("//")])
        cli.run([f"set_crc32_parameters {n} {' '.join(c)}" for n, c in zip(crc_names, CRC)])
        load_state(cli, cfg, json.load(open(os.path.join(case_dir, "state_in.json"))))
        socks = []
        for i in range(n_ports):
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
            s.bind((f"ufab{i}b", 0))
            s.setblocking(False)
            socks.append(s)
        got = {i: [] for i in range(n_ports)}
        want = {i: [] for i in range(n_ports)}
        state = {"epoch": json.load(open(os.path.join(case_dir, "state_in.json")))["epoch"]}
        for ev in case["events"]:
            if ev["kind"] == "tick":
                age(cli, cfg, n_ports, cfg["aging_period_ns"], ev["time_ns"], state)
                continue
            socks[ev["in_port"]].send(ins[ev["in_pcap_index"]])
            if ev["result"] == "forward":
                want[ev["out_port"]].append(outs[ev["out_pcap_index"]])
            time.sleep(0.2)
            for i, s in enumerate(socks):
                while True:
                    try:
                        got[i].append(s.recv(65535))
                    except BlockingIOError:
                        break
        ok = True
        for i in range(n_ports):
            g = [mask_stamped(x) for x in got[i] if x not in ins]   # ignore our own sends echoed on the veth
            w = [mask_stamped(x) for x in want[i]]
            if g != w:
                print(f"  port {i}: {len(g)} packets out, {len(w)} expected, or bytes differ")
                ok = False
        exp = json.load(open(os.path.join(case_dir, "state_out.json")))
        if cli.read("epoch", 0) != exp["epoch"]:
            ok = False
            print("  epoch differs")
        for p in exp["ports"]:
            for reg, key in (("phi_sum", "phi_sum"), ("w_sum", "w_sum")):
                if cli.read(reg, p["port"]) != p[key]:
                    ok = False
                    print(f"  {reg}[{p['port']}] differs")
            for s in p["slots"]:
                k = slot_index(cfg, p["port"], s)
                if (cli.read("slot_tag", k), cli.read("slot_phi", k), cli.read("slot_w", k)) != \
                        ((1 << 24) | s["fp"], s["phi"], s["w"]):
                    ok = False
                    print(f"  slot {k} of port {p['port']} differs")
        return ok
    finally:
        sw.terminate()
        sw.wait()
        for i in range(n_ports):
            subprocess.run(["ip", "link", "del", f"ufab{i}a"], capture_output=True)


def main():
    ap = argparse.ArgumentParser()
    for a in ("--json", "--runtime", "--vectors", "--work"):
        ap.add_argument(a, required=True)
    args = ap.parse_args()
    prog = json.load(open(args.json))
    crc_names = [c["name"] for c in prog.get("calculations", []) if c.get("algo") == "crc32_custom"]
    if len(crc_names) != 3:
        print(f"expected 3 crc32_custom calculations in {args.json}, found {crc_names}")
        return 1
    failed = []
    for case in sorted(os.listdir(args.vectors)):
        d = os.path.join(args.vectors, case)
        n_ports = json.load(open(os.path.join(d, "case.json")))["config"]["n_ports"]
        ok = run_case(args, d, crc_names, n_ports)
        print(f"{case}: {'ok' if ok else 'MISMATCH'}")
        if not ok:
            failed.append(case)
    print(f"bmv2 replay: {len(failed)} of {len(os.listdir(args.vectors))} cases differ")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
