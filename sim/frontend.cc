#include "sim/frontend.h"

namespace scratchsim {
namespace {

// Constructed on first use, so registrations from static initializers in any order find it.
std::vector<std::unique_ptr<FrontEnd>>& Registry() {
  static auto* registry = new std::vector<std::unique_ptr<FrontEnd>>();
  return *registry;
}

}  // namespace

void RegisterFrontEnd(std::unique_ptr<FrontEnd> front_end) { Registry().push_back(std::move(front_end)); }

const std::vector<std::unique_ptr<FrontEnd>>& FrontEnds() { return Registry(); }

}  // namespace scratchsim
