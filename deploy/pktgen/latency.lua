-- pktgen-dpdk 23.06.1 Lua script: latency mode (timestamped 128 B frames at 10% of line rate; see page latency)
-- ufab: matches deploy/pktgen/edge-a.yaml
-- One flow of tenant 100: VM a100-1 (10.100.0.1) -> VM b100-1 (10.100.1.1) behind edge B.
-- Runs for UFAB_SECONDS (default 10) and prints what port 1 (edge B's VM side) received.
package.path = package.path .. ";?.lua;test/?.lua;app/?.lua;"
require "Pktgen"

local seconds = tonumber(os.getenv("UFAB_SECONDS") or "10")

pktgen.stop("all")
pktgen.clr()
pktgen.set_type("0", "ipv4")
pktgen.set_proto("0", "udp")
pktgen.set("0", "size", 128)
pktgen.set("0", "rate", 10)
pktgen.set_mac("0", "src", "02:00:00:64:00:01")
pktgen.set_mac("0", "dst", "02:00:00:64:01:01")
pktgen.set_ipaddr("0", "src", "10.100.0.1/24")
pktgen.set_ipaddr("0", "dst", "10.100.1.1")
pktgen.set("0", "sport", 1000)
pktgen.set("0", "dport", 9)
pktgen.latency("0-1", "on")
pktgen.start("0")
pktgen.delay(seconds * 1000)
pktgen.stop("0")
pktgen.delay(500)
local tx = pktgen.portStats("0", "port")[0]
local rx = pktgen.portStats("1", "port")[1]
printf("ufab latency: sent %d, received %d (%.2f%%) in %d s\n", tx.opackets, rx.ipackets,
       tx.opackets > 0 and 100.0 * rx.ipackets / tx.opackets or 0, seconds)
