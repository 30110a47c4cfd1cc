"""The COMN assignment's programs (Sender1-4.py, Receiver1-4.py), run as scripts; see
reference/PROTOCOL.md. Their shared pieces are in common.py and unreliable.py."""
