// The SimGrid oracle for kernbench's shared-link model (docs/simgrid.md).
// Usage: oracle PLATFORM.xml PROGRAM.txt [--cfg=...]
// PROGRAM.txt: one line per operation, "<host> <op> <args>", in each host's program order:
//   <host> isend <handle> <dst> <bytes>   post a send of <bytes> to <dst> (eager: it starts now;
//                                         detached: nobody waits for it, see below)
//   <host> irecv <handle> <src>           post the receive of the next message from <src>
//   <host> wait <handle>                  wait for that send or receive
// Every mailbox "src->dst" has its receiver set (Mailbox::set_receiver), so a
// send starts as soon as it is posted, like an IPCQ send into free slots.
// A kernbench send completes when its last byte leaves the sender, not when it
// arrives; SimGrid's comm completes at arrival, so a send is detached instead
// of waited for (a wait on a send handle is a no-op): the sender goes on, the
// receiver's wait still pays latency + size / bandwidth share.
// Prints the simulated time at which the last actor finished, in ns.
#include <simgrid/s4u.hpp>
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

static sg4::Mailbox* box(const std::string& from, const std::string& to) { return sg4::Mailbox::by_name(from + "->" + to); }

static void run(std::string me) {
  const auto& ops = programs[me];
  // Eager delivery: this actor receives everything sent to it.
  for (const auto& [host, _] : programs)
    if (host != me) box(host, me)->set_receiver(sg4::Actor::self());
  std::map<int, sg4::CommPtr> comms;
  static int token;
  std::map<int, void*> got;
  for (const auto& op : ops) {
    if (op.kind == "isend") {
      box(me, op.peer)->put_init(&token, static_cast<uint64_t>(op.bytes))->detach();
    } else if (op.kind == "irecv") {
      comms[op.handle] = box(op.peer, me)->get_async<void>(&got[op.handle]);
    } else if (op.kind == "wait") {
      if (auto c = comms.find(op.handle); c != comms.end()) c->second->wait();
    }
  }
  last_end = std::max(last_end, sg4::Engine::get_clock());
}

int main(int argc, char** argv) {
  sg4::Engine e(&argc, argv);
  xbt_assert(argc >= 3, "usage: %s PLATFORM.xml PROGRAM.txt", argv[0]);
  e.load_platform(argv[1]);
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
  for (const auto& [host, _] : programs) sg4::Actor::create(host, sg4::Host::by_name(host), run, host);
  e.run();
  printf("%.3f\n", last_end * 1e9);
  return 0;
}
