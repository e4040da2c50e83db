"""The kernel a report render starts: IPython's own kernel without its debugger.

ipykernel builds a debugger in every kernel it starts (for JupyterLab's debug panel), importing debugpy's
vendored pydevd for it: ~0.2 CPU-s, a quarter of a kernel's start. A render never debugs, so
:func:`memeval.analysis.report.execute_notebook` starts this class instead
(``--IPKernelApp.kernel_class``, :data:`~memeval.analysis.report.REPORT_KERNEL_CLASS`) when the kernel
runs memeval's own interpreter. The kernel then says it has no debugger (``kernel_info`` lists no
``debugger`` feature), as ipykernel does where debugpy is not installed; a notebook that imports
debugpy itself still gets it.

It also shuts down at once. ipykernel 7.4 has a race at shutdown: the control thread, after answering the
shutdown request, flushes the captured ``sys.stdout`` through the IOPub thread, which the main thread may
already have stopped; that flush then waits its 10 s timeout, the main thread waits for the control thread,
and jupyter_client sends SIGTERM after 2.5 s. About every other render waited those 2.5 s. The kernel
flushes its output and hands back the process's own streams while answering the request, so nothing is
left for that thread to flush through the stopped one.
"""

from __future__ import annotations

import sys
from typing import Any

from ipykernel.ipkernel import IPythonKernel

__all__ = ["ReportKernel"]


class ReportKernel(IPythonKernel):
    """:class:`IPythonKernel` built while ``debugpy`` cannot be imported (``None`` in ``sys.modules``,
    Python's own "not importable" mark), so ipykernel skips its debugger; the mark is lifted after."""

    @classmethod
    def instance(cls, *args: Any, **kwargs: Any) -> Any:
        hidden = "debugpy" not in sys.modules
        if hidden:
            sys.modules["debugpy"] = None  # type: ignore[assignment]
        try:
            return super().instance(*args, **kwargs)
        finally:
            if hidden and "debugpy" in sys.modules and sys.modules["debugpy"] is None:
                del sys.modules["debugpy"]

    def do_shutdown(self, restart: bool) -> Any:
        reply = super().do_shutdown(restart)
        if not restart:
            for stream in (sys.stdout, sys.stderr):
                if stream is not None:
                    stream.flush()  # what the notebook printed last still reaches the client
            sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__  # as IPKernelApp.reset_io does next
        return reply
