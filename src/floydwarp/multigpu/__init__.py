"""The ``multigpu`` backend: several GPUs of one node, one worker process per GPU, NCCL between them."""
