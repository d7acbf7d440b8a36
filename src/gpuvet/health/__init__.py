"""The health job: the fast pre/post-job check (no benchmark) that schedulers and
node-problem-detector run on every node."""
