// How `simulate plan` writes what it planned: text for people, JSON for autotuners, CSV; one
// graph's plan, or several kernel families ranked together with a family column.
#ifndef SCRATCHSIM_SIM_DRIVER_PLAN_OUTPUT_H_
#define SCRATCHSIM_SIM_DRIVER_PLAN_OUTPUT_H_

#include <ostream>
#include <string>

#include "absl/types/span.h"
#include "proto/device.pb.h"
#include "sim/graph.h"
#include "sim/planner/families.h"
#include "sim/planner/planner.h"

namespace scratchsim {

// One graph's plan; `format` is text, json or csv (PlanRequest checks it).
void RenderPlan(const PlanResult& plan, const CompiledGraph& graph, const DeviceModel& device,
                const std::string& format, std::ostream& out);

// Several families' plan (`graphs` in the families' order): each family's sweep as RenderPlan
// words it, the families by their best estimate and why the fastest wins, and one ranking with
// the family of each configuration (text and CSV: a family column; JSON: `family` per
// configuration, a `families` array and the `choice`).
void RenderFamilies(const FamiliesPlan& plan, absl::Span<const CompiledGraph* const> graphs,
                    const DeviceModel& device, const std::string& format, std::ostream& out);

// Why the fastest family wins, in one line: how much faster its best is than the next family's,
// the model term that decides (PlanFamilies' FamilyChoice) and the two grids on the device's cores.
std::string FamilyChoiceLine(const FamiliesPlan& plan, int num_cores);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_DRIVER_PLAN_OUTPUT_H_
