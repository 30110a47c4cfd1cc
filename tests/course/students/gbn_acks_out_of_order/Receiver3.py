# Ada Bugg s0000003
# A Go-Back-N receiver with a planted bug, as students write it: it ACKs whatever
# arrives, in order or not, so the sender's cumulative ACKs skip packets that were lost.
import socket
import struct
import sys
import time

port, filename = int(sys.argv[1]), sys.argv[2]
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.bind(("localhost", port))
expected = 0
out = open(filename, "wb")
done_at = None
while True:
    sock.settimeout(2.0 if done_at else None)
    try:
        data, sender = sock.recvfrom(2048)
    except socket.timeout:
        break
    seq, eof = struct.unpack("!HB", data[:3])
    if seq == expected and done_at is None:
        out.write(data[3:])
        expected += 1
        if eof:
            out.close()
            done_at = time.time()
    sock.sendto(struct.pack("!H", seq), sender)   # BUG: should ACK expected - 1
