// The SimGrid oracle for kernbench's shared-link model (docs/simgrid.md).
// Usage: oracle PLATFORM.xml PROGRAM.txt [detached] [--cfg=...]
// PROGRAM.txt: one line per operation, "<host> <op> <args>", in each host's program order:
//   <host> isend <handle> <dst> <bytes>   post a send of <bytes> to <dst> (eager: it starts now)
//   <host> irecv <handle> <src>           post the receive of the next message from <src>
//   <host> wait <handle>                  wait for that send or receive
// Every mailbox "src->dst" has its receiver set (Mailbox::set_receiver), so a
// send starts as soon as it is posted, like an IPCQ send into free slots.
//
// Sends as kernbench times them (decision 0023, "Integration", design 3): a send
// is done for its kernel when its last byte left (its arrival minus its route's
// latency L), and the kernel's later sends enter their links no earlier than the
// arrival of the sends it waited for (the join floor). SimGrid's comm completes
// at arrival, so each actor keeps a kernel clock of its own: a wait on a receive
// moves it to the receive's finish, a wait on a send to the send's finish - L
// (the actor itself waits for the finish, to know it) and raises the floor to
// the finish. A send posted at kernel clock k on a route of latency L must start
// its bandwidth phase at J = max(k + L, floor); the actor's SimGrid clock is
// then at most J, so the send is posted now with its latency scaled by
// (J - now) / L (a latency-factor callback, one factor per send, FIFO per
// pair). CM02's sharing penalty stays the route's own latency L (SimGrid takes
// it before the factor); a factor of 0 would make SimGrid give the flow
// penalty 1, so the least latency is 1 fs.
// "detached": the older program, kept to show what the floor changes: a send
// is detached and never waited for, so a rank goes on as soon as its receive is in
// and its next send may share its up port with the one still streaming.
// Prints the simulated time at which the last actor finished (the latest kernel
// clock or send arrival), in ns.
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u.hpp>
#include <algorithm>
#include <deque>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

struct Op {
  std::string kind;
  int handle = 0;
  std::string peer;
  double bytes = 0;
};

static std::map<std::string, std::vector<Op>> programs;
static double last_end = 0;
static bool detached = false;
/** The latency factor of each posted send not yet started, FIFO per "src->dst". */
static std::map<std::string, std::deque<double>> factors;
/** Least latency in s: a factor of 0 would give the flow penalty 1 instead of its latency. */
static constexpr double MIN_LATENCY = 1e-15;

static sg4::Mailbox* box(const std::string& from, const std::string& to) { return sg4::Mailbox::by_name(from + "->" + to); }

static double route_latency(const std::string& from, const std::string& to) {
  std::vector<sg4::Link*> links;
  double latency = 0;
  sg4::Host::by_name(from)->route_to(sg4::Host::by_name(to), links, &latency);
  return latency;
}

static void run(std::string me) {
  const auto& ops = programs[me];
  struct Pending {
    sg4::CommPtr comm;
    double latency = -1; // a send's route latency; -1 for a receive
  };
  std::map<int, Pending> comms;
  static int token;
  std::map<int, void*> got;
  double clock = 0; // the kernel's clock
  double floor = 0; // the join floor: the latest arrival of a send waited for
  for (const auto& op : ops) {
    if (op.kind == "isend") {
      auto comm = box(me, op.peer)->put_init(&token, static_cast<uint64_t>(op.bytes));
      if (detached) {
        comm->detach();
        continue;
      }
      double latency = route_latency(me, op.peer);
      double join = std::max(clock + latency, floor);
      double now = sg4::Engine::get_clock();
      factors[me + "->" + op.peer].push_back(std::max(join - now, MIN_LATENCY) / latency);
      comm->start();
      comms[op.handle] = {comm, latency};
    } else if (op.kind == "irecv") {
      comms[op.handle] = {box(op.peer, me)->get_async<void>(&got[op.handle]), -1};
    } else if (op.kind == "wait") {
      auto c = comms.find(op.handle);
      if (c == comms.end()) continue;
      c->second.comm->wait();
      double end = c->second.comm->get_finish_time();
      if (c->second.latency < 0) {
        clock = std::max(clock, end);
      } else {
        clock = std::max(clock, end - c->second.latency);
        floor = std::max(floor, end);
      }
      comms.erase(c);
    }
  }
  for (auto& [_, c] : comms) c.comm->wait(); // sends never waited for: the kernel still ends after their arrival
  last_end = std::max(last_end, sg4::Engine::get_clock());
  last_end = std::max(last_end, clock);
}

int main(int argc, char** argv) {
  sg4::Engine e(&argc, argv);
  xbt_assert(argc >= 3, "usage: %s PLATFORM.xml PROGRAM.txt [detached]", argv[0]);
  detached = argc >= 4 && std::string(argv[3]) == "detached";
  e.load_platform(argv[1]);
  e.get_netzone_root()->get_network_model()->set_lat_factor_cb(
      [](double, const sg4::Host* src, const sg4::Host* dst, const std::vector<sg4::Link*>&, const std::unordered_set<sg4::NetZone*>&) {
        auto& q = factors[src->get_name() + "->" + dst->get_name()];
        if (q.empty()) return 1.0; // detached sends keep their route's latency
        double f = q.front();
        q.pop_front();
        return f;
      });
  std::ifstream in(argv[2]);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string host;
    Op op;
    if (!(ls >> host >> op.kind)) continue;
    if (op.kind == "isend") ls >> op.handle >> op.peer >> op.bytes;
    else if (op.kind == "irecv") ls >> op.handle >> op.peer;
    else ls >> op.handle;
    programs[host].push_back(op);
  }
  std::map<std::string, sg4::ActorPtr> actors;
  for (const auto& [host, _] : programs) actors[host] = sg4::Actor::create(host, sg4::Host::by_name(host), run, host);
  // Eager delivery, set before any actor runs: each actor receives everything sent to it.
  for (const auto& [to, actor] : actors)
    for (const auto& [from, _] : actors)
      if (from != to) box(from, to)->set_receiver(actor);
  e.run();
  printf("%.3f\n", last_end * 1e9);
  return 0;
}
