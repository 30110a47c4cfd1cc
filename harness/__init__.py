"""rdtlab harness: the lab bench (link engine, hosts, transfers, experiments).

from harness import Link, Path, Program, run_transfer
res = run_transfer(sender=Program("python3 Sender2.py {receiver_host} {receiver_port} {file} 20",
                                  output_format="comn-sw"),
                   receiver=Program("python3 Receiver2.py {listen_port} {output}"),
                   link=Link("delay 5ms loss 5% rate 10mbit", shared_queue=True),
                   size=1 << 20, seed=1)
print(res.summary())
"""

from harness.backends import BackendUnavailable
from harness.engine import EngineError, EngineNotFound, SpecError, check_spec, find_linkemu
from harness.monitor import ErrorKind
from harness.procs import UsageError
from harness.transfer import Link, Path, Program, ProgramResult, TransferResult, run_transfer

__all__ = [
    "Link",
    "Path",
    "Program",
    "ProgramResult",
    "TransferResult",
    "run_transfer",
    "UsageError",
    "SpecError",
    "BackendUnavailable",
    "EngineError",
    "EngineNotFound",
    "check_spec",
    "find_linkemu",
    "ErrorKind",
]
