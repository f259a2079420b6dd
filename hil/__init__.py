"""Hardware-in-the-loop: real-time runner, CAN/serial/DAQ backends, virtual twins.

Not built yet: the HIL issue fills this package (python-can, cantools and
pyserial in the ``hil`` extra, imported lazily).
"""
