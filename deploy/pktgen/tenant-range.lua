-- pktgen-dpdk 23.06.1 Lua script: a range of VM addresses of tenant 100
-- ufab: matches deploy/pktgen/edge-a.yaml
-- Source a100-1..4 (10.100.0.1-4) and destination b100-1..4 (10.100.1.1-4) step together,
-- so the frames cycle over the VM-pairs a100-i -> b100-i; source ports 1000-1003.
package.path = package.path .. ";?.lua;test/?.lua;app/?.lua;"
require "Pktgen"

local seconds = tonumber(os.getenv("UFAB_SECONDS") or "10")

pktgen.stop("all")
pktgen.clr()
pktgen.range.ip_proto("0", "udp")
pktgen.range.src_mac("0", "start", "02:00:00:64:00:01")
pktgen.range.dst_mac("0", "start", "02:00:00:64:01:01")
pktgen.range.src_ip("0", "start", "10.100.0.1")
pktgen.range.src_ip("0", "min", "10.100.0.1")
pktgen.range.src_ip("0", "max", "10.100.0.4")
pktgen.range.src_ip("0", "inc", "0.0.0.1")
pktgen.range.dst_ip("0", "start", "10.100.1.1")
pktgen.range.dst_ip("0", "min", "10.100.1.1")
pktgen.range.dst_ip("0", "max", "10.100.1.4")
pktgen.range.dst_ip("0", "inc", "0.0.0.1")
pktgen.range.src_port("0", "start", 1000)
pktgen.range.src_port("0", "min", 1000)
pktgen.range.src_port("0", "max", 1003)
pktgen.range.src_port("0", "inc", 1)
pktgen.range.dst_port("0", "start", 9)
pktgen.range.dst_port("0", "min", 9)
pktgen.range.dst_port("0", "max", 9)
pktgen.range.dst_port("0", "inc", 0)
pktgen.range.pkt_size("0", "start", 1500)
pktgen.range.pkt_size("0", "min", 1500)
pktgen.range.pkt_size("0", "max", 1500)
pktgen.range.pkt_size("0", "inc", 0)
pktgen.set_range("0", "on")
pktgen.set("0", "rate", 100)
pktgen.start("0")
pktgen.delay(seconds * 1000)
pktgen.stop("0")
pktgen.delay(500)
local tx = pktgen.portStats("0", "port")[0]
local rx = pktgen.portStats("1", "port")[1]
printf("ufab tenant-range: sent %d, received %d in %d s\n", tx.opackets, rx.ipackets, seconds)
