// SimGrid's side of benches/simgrid/compare.ts: the ring all-reduce that
// kernbench's allreduce_perf runs on topologies/ideal.yaml, as a SimGrid S4U
// program, so that the two simulators' wall times compare on the same case.
//
//   ring_allreduce P BYTES ALPHA_NS BETA_GBS
//
// P hosts in a ring; host r reaches host r+1 (mod P) over one link of latency
// ALPHA_NS and bandwidth BETA_GBS (GB/s = bytes/ns), and nothing else. The
// network model is CM02 (latency plus size / bandwidth, max-min sharing, no
// correction factors), which is the ideal topology's alpha-beta law. Each of
// the P actors runs 2 (P - 1) steps (reduce-scatter then all-gather); a step
// sends one chunk of BYTES / P bytes east (put_async), receives one from the
// west (get), then waits for its send, as kernbench's ring steps do
// (lib/ccl/steps.ts). Nothing is computed: the ideal topology's math is free
// and kernbench runs with --no-data. So the simulated time must be
// 2 (P - 1) (ALPHA + BYTES / (P BETA)), the same crit_ns kernbench reports.
//
// Prints one line: "simulated_ns <t>" (t in ns, from SimGrid's seconds).
#include <simgrid/s4u.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

static int payload; // every message carries a pointer to this; only sizes matter

static void rank(int r, int p, double chunk_bytes)
{
  sg4::Mailbox* mine = sg4::Mailbox::by_name("m" + std::to_string(r));
  sg4::Mailbox* next = sg4::Mailbox::by_name("m" + std::to_string((r + 1) % p));
  for (int s = 0; s < 2 * (p - 1); s++) {
    sg4::CommPtr sent = next->put_async(&payload, chunk_bytes);
    mine->get<int>();
    sent->wait();
  }
}

int main(int argc, char** argv)
{
  sg4::Engine e(&argc, argv);
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s P BYTES ALPHA_NS BETA_GBS, got %d arguments\n", argv[0], argc - 1);
    return 2;
  }
  const int p          = std::atoi(argv[1]);
  const double bytes   = std::atof(argv[2]);
  const double alpha_s = std::atof(argv[3]) * 1e-9;
  const double beta_Bs = std::atof(argv[4]) * 1e9;
  e.set_config("network/model:CM02");
  e.set_config("network/optim:Full"); // an exact max-min solve at every event, not the lazy update

  auto* zone = sg4::create_full_zone("ring");
  std::vector<sg4::Host*> hosts;
  for (int r = 0; r < p; r++)
    hosts.push_back(zone->create_host("h" + std::to_string(r), 1e9));
  for (int r = 0; r < p; r++) {
    sg4::Link* link = zone->create_link("l" + std::to_string(r), beta_Bs)->set_latency(alpha_s)->seal();
    zone->add_route(hosts[r]->get_netpoint(), hosts[(r + 1) % p]->get_netpoint(), nullptr, nullptr,
                    {sg4::LinkInRoute(link)}, false);
  }
  zone->seal();

  for (int r = 0; r < p; r++)
    sg4::Actor::create("rank" + std::to_string(r), hosts[r], rank, r, p, bytes / p);
  e.run();
  std::printf("simulated_ns %.3f\n", sg4::Engine::get_clock() * 1e9);
  return 0;
}
