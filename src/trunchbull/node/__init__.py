"""Node plumbing: the pinned toolchain, the trusted helper, the sandbox for user code, the
worker pool, the npm installer and the protocol every Node process speaks."""
