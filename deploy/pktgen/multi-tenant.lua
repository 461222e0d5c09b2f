-- pktgen-dpdk 23.06.1 Lua script: two tenants, seven VM-pairs, one sequence each
-- ufab: matches deploy/pktgen/edge-a.yaml
-- Tenant 100 (VNI 100, 4 Gb/s per VM, class 1): a100-i -> b100-i; tenant 200 (VNI 200,
-- 2 Gb/s per VM, class 0): a200-i -> b200-i (i = 1..3). Watch the split with
-- `ufabctl -f edgeA tenants` / `ufabctl -f edgeA pairs` while it runs.
package.path = package.path .. ";?.lua;test/?.lua;app/?.lua;"
require "Pktgen"

local seconds = tonumber(os.getenv("UFAB_SECONDS") or "10")

pktgen.stop("all")
pktgen.clr()
pktgen.seq(0, "0", "02:00:00:64:01:01", "02:00:00:64:00:01", "10.100.1.1", "10.100.0.1/24", 1001, 9, "ipv4", "udp", 0, 1500)
pktgen.seq(1, "0", "02:00:00:64:01:02", "02:00:00:64:00:02", "10.100.1.2", "10.100.0.2/24", 1002, 9, "ipv4", "udp", 0, 1500)
pktgen.seq(2, "0", "02:00:00:64:01:03", "02:00:00:64:00:03", "10.100.1.3", "10.100.0.3/24", 1003, 9, "ipv4", "udp", 0, 1500)
pktgen.seq(3, "0", "02:00:00:64:01:04", "02:00:00:64:00:04", "10.100.1.4", "10.100.0.4/24", 1004, 9, "ipv4", "udp", 0, 1500)
pktgen.seq(4, "0", "02:00:00:c8:01:01", "02:00:00:c8:00:01", "10.200.1.1", "10.200.0.1/24", 1001, 9, "ipv4", "udp", 0, 1500)
pktgen.seq(5, "0", "02:00:00:c8:01:02", "02:00:00:c8:00:02", "10.200.1.2", "10.200.0.2/24", 1002, 9, "ipv4", "udp", 0, 1500)
pktgen.seq(6, "0", "02:00:00:c8:01:03", "02:00:00:c8:00:03", "10.200.1.3", "10.200.0.3/24", 1003, 9, "ipv4", "udp", 0, 1500)
pktgen.set("0", "seq_cnt", 7)
pktgen.set("0", "rate", 100)
pktgen.start("0")
pktgen.delay(seconds * 1000)
pktgen.stop("0")
pktgen.delay(500)
local tx = pktgen.portStats("0", "port")[0]
local rx = pktgen.portStats("1", "port")[1]
printf("ufab multi-tenant: sent %d, received %d in %d s\n", tx.opackets, rx.ipackets, seconds)
