#!/usr/bin/env bash
# The dependency direction of docs/architecture.md, checked on the sources:
#   proto <- sim (the model library) <- {sim/planner, backends/*} <- sim/driver
# and product code never takes a file from bench/ (bench/ is a client of the product): no build
# rule reads, copies, configures or installs one, the wheel packages none, no product Python
# imports one. Usage: layering_test.sh SOURCE_DIR. Prints every line that breaks it and exits 1.
set -u
cd "${1:-.}" || exit 2
status=0
breaks() {  # breaks DESCRIPTION FILES... : prints matching include lines
  local what="$1"; shift
  local found
  found=$(grep -Hn -E "$what" "$@" 2>/dev/null)
  if [ -n "$found" ]; then
    echo "$found"
    status=1
  fi
}
model_library=$(ls sim/*.h sim/*.cc)
echo "sim/ (the model library) includes no planner, driver or backend:"
breaks '#include "(sim/planner|sim/driver|backends)/' $model_library
echo "sim/planner includes no driver or backend:"
breaks '#include "(sim/driver|backends)/' sim/planner/*
for backend in backends/*/; do
  name=$(basename "$backend")
  echo "backends/$name includes no other backend, no planner, no driver:"
  breaks '#include "(sim/planner|sim/driver)/' $(ls "$backend"*.h "$backend"*.cc 2>/dev/null)
  others=$(ls -d backends/*/ | xargs -n1 basename | grep -v "^$name\$" | paste -sd'|')
  [ -n "$others" ] && breaks "#include \"backends/($others)/" $(ls "$backend"*.h "$backend"*.cc 2>/dev/null)
done
python_module=$(ls sim/python/*.cc sim/python/*.h 2>/dev/null)
if [ -n "$python_module" ]; then
  echo "sim/python (the Python module) is a client of the driver: no backend, no planner internals:"
  breaks '#include "(backends|sim/planner)/' $python_module
fi
echo "no backend is chosen by the preprocessor:"
breaks 'SCRATCHSIM_HAVE_' $(git ls-files '*.h' '*.cc' 'CMakeLists.txt' '*/CMakeLists.txt' 2>/dev/null || true)
echo "no CMake file outside bench/ reads, copies, configures or installs a file of bench/:"
# Every non-comment line naming a path under bench/ (a set() too: file(READ) may read its variable).
breaks '^[^#]*bench/' $(git ls-files 'CMakeLists.txt' '*/CMakeLists.txt' '*.cmake' '*.cmake.in' | grep -v '^bench/')
echo "pyproject.toml packages nothing from bench/ (excluding it from the sdist is allowed):"
found=$(grep -n 'bench/' pyproject.toml | grep -v -E '^[0-9]+:[[:space:]]*(#|sdist\.exclude[[:space:]]*=)')
[ -n "$found" ] && { echo "$found" | sed 's/^/pyproject.toml:/'; status=1; }
echo "no Python of sim/python or backends imports from bench/ or puts it on sys.path:"
quote="[\"']"
breaks "^[[:space:]]*(import|from)[[:space:]]+bench([.[:space:]]|\$)|sys\.path.*bench|${quote}bench(${quote}|/)" \
  $(git ls-files 'sim/python/*.py' 'backends/*.py')
[ $status -eq 0 ] && echo "layering: ok"
exit $status
