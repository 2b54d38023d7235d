"""`python -m scratchsim ARGS...` is the `simulate` command (the same flags and exit codes)."""
import sys

import scratchsim


def main(argv=None) -> int:
    code, out, err = scratchsim.run(sys.argv[1:] if argv is None else argv)
    sys.stdout.write(out)
    sys.stderr.write(err)
    return code


if __name__ == "__main__":
    sys.exit(main())
