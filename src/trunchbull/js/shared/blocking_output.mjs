// Makes the given output streams (process.stdout, process.stderr) block when
// their pipe is full.
//
// Node writes to a pipe without blocking: what does not fit waits in this
// process's memory until the event loop turns, which code printing in a loop
// never lets it do (a transformer printing 1.5 MB lines held half a gigabyte
// within seconds). Blocking, the output stays in the pipe, which the caller
// drains as fast as it is written and keeps within a cap
// (node/bounded_output.py), and a process printing without end is paced by
// that reader instead of growing.
//
// Every stream is made before any is changed: making one sets its pipe
// non-blocking again, and stdout and stderr may be one pipe (a worker's log,
// which a model caller and its tool executor share: each process calls this
// at its start, so the last change to the pipe is always one of these).
export function blockOnFullPipes(...streams) {
  for (const stream of streams) stream._handle?.setBlocking?.(true);
}
