"""The ``multigpu`` backend: several GPUs of one node, a thread per GPU, panels copied peer to peer."""
