# bfrt_python control plane for p4/tofino/ufab_tna.p4 (run inside
# `bfshell -b p4/tofino/bfrt_setup.py`, where `bfrt` is predefined).
# Sets logical ports (label -> device port, C'_l capacity code, up/down), L3
# host routes with the exact CRC-32 % n ECMP tables, and runs the aging sweep
# of p4/model (§4.2): every aging period the epoch advances and every slot
# whose epoch < current - 1 is freed and its φ and w subtracted from Φ_l, W_l.
import time

P = bfrt.ufab_tna.pipe
BUCKETS_LOG2 = 12            # must match UFAB_BUCKETS_LOG2
LPORTS_LOG2 = 5              # must match UFAB_LPORTS_LOG2
AGING_PERIOD_S = 10          # SwitchConfig::aging_period (§4.2: 10 s)

# logical port (label) -> (device port, capacity code of docs/wire-format.md §8)
PORTS = {0: (0, 9), 1: (4, 9), 2: (8, 5), 3: (12, 9), 4: (16, 9), 5: (20, 6), 6: (24, 9), 7: (28, 11)}
# /32 host routes for non-uFAB traffic: dst -> logical ports (ECMP group)
ROUTES = {"10.0.9.1": [3, 4], "10.0.9.2": [5]}


def set_port(lport, dev, code, up=True):
    P.Ingress.out_port_map.add_with_set_out(out_lport=lport, dev=dev, code=code, up=int(up))
    P.Ingress.in_port_map.add_with_set_in_lport(ingress_port=dev, lport=lport)
    P.Ingress.in_port_state.add_with_set_in_state(in_lport=lport, dev=dev, up=int(up))


def port_up_down(lport, up):
    dev, code = PORTS[lport]
    P.Ingress.out_port_map.mod_with_set_out(out_lport=lport, dev=dev, code=code, up=int(up))
    P.Ingress.in_port_state.mod_with_set_in_state(in_lport=lport, dev=dev, up=int(up))


def add_route(dst, lports, group):
    n = len(lports)
    P.Ingress.l3_host.add_with_set_group(dst_addr=dst, group=group, n=n)
    for i, tbl in enumerate((P.Ingress.mod_b0, P.Ingress.mod_b1, P.Ingress.mod_b2, P.Ingress.mod_b3)):
        for byte in range(256):
            key = {"ecmp_n": n, f"ecmp_hash[{8 * i + 7}:{8 * i}]": byte}
            try:
                getattr(tbl, f"add_with_set_m{i}")(**key, r=(byte << (8 * i)) % n)
            except Exception:
                pass                 # (n, byte) already installed by another group of the same size
    for s in range(4 * (n - 1) + 1):  # Σ of four residues, each < n
        P.Ingress.ecmp_member.add_with_set_member(ecmp_group=group, msum=s, ecmp_n=n, lport=lports[s % n])


def set_epoch(e):
    P.Ingress.epoch_reg.set_default_with_set_epoch(e=e)


def sweep(epoch):
    """Free every slot with epoch < epoch - 1 (SlotTable::age) and subtract its values."""
    if epoch < 2:
        return 0
    removed = 0
    nb = 1 << BUCKETS_LOG2
    for bank in (0, 1):
        for way in range(4):
            reg = getattr(P.Ingress, f"tag_b{bank}w{way}")
            for e in reg.get(regex=True, from_hw=True, return_ents=True, print_ents=False) or []:
                d = e.to_dict()
                idx = d["key"]["$REGISTER_INDEX"]
                tag = d["data"][f"Ingress.tag_b{bank}w{way}.first"][0]
                ep = d["data"][f"Ingress.tag_b{bank}w{way}.second"][0]
                if tag == 0 or ep >= epoch - 1:
                    continue
                lport, bucket = idx >> BUCKETS_LOG2, idx & (nb - 1)
                vidx = (((lport << 1) | bank) << BUCKETS_LOG2 | bucket) << 2 | way
                phi = P.Ingress.slot_phi.get(REGISTER_INDEX=vidx, from_hw=True, print_ents=False).data[b"Ingress.slot_phi.f1"][0]
                w = P.Ingress.slot_w.get(REGISTER_INDEX=vidx, from_hw=True, print_ents=False).data[b"Ingress.slot_w.f1"][0]
                s_phi = P.Ingress.phi_sum.get(REGISTER_INDEX=lport, from_hw=True, print_ents=False).data[b"Ingress.phi_sum.f1"][0]
                s_w = P.Ingress.w_sum.get(REGISTER_INDEX=lport, from_hw=True, print_ents=False).data[b"Ingress.w_sum.f1"][0]
                reg.mod(REGISTER_INDEX=idx, first=0, second=0)
                P.Ingress.slot_phi.mod(REGISTER_INDEX=vidx, f1=0)
                P.Ingress.slot_w.mod(REGISTER_INDEX=vidx, f1=0)
                P.Ingress.phi_sum.mod(REGISTER_INDEX=lport, f1=(s_phi - phi) & 0xFFFFFFFF)
                P.Ingress.w_sum.mod(REGISTER_INDEX=lport, f1=(s_w - w) & 0xFFFFFFFF)
                removed += 1
    return removed


def setup():
    for lport, (dev, code) in PORTS.items():
        set_port(lport, dev, code)
    for group, (dst, lports) in enumerate(ROUTES.items()):
        add_route(dst, lports, group)
    set_epoch(0)


def aging_loop(start=None):
    """SwitchModel::tick: epoch = now / period; sweep when it advances. The
    read-modify-write of a sum races with the data plane; run it during a
    quiet instant or accept that a probe landing in between is re-learned."""
    t0 = time.time() if start is None else start
    epoch = 0
    while True:
        e = int((time.time() - t0) // AGING_PERIOD_S)
        if e > epoch:
            epoch = e
            set_epoch(epoch)
            print(f"epoch {epoch}: aged {sweep(epoch)} slots")
        time.sleep(0.5)


setup()
