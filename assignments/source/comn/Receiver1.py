# Forename Surname Matric
"""Part 1: receive a file over UDP, no reliability (complete, as the course hands it out).

    python3 Receiver1.py <Port> <Filename>
"""
import rdt

port, filename = rdt.arguments(["Port", "Filename"])
sock = rdt.receiver_socket(port)
with open(filename, "wb") as out:
    while True:
        message = rdt.unpack_data(sock.recvfrom(rdt.MAX_DATAGRAM + 1)[0])
        if message is None:
            continue
        seq, eof, payload = message
        out.write(payload)
        if eof:
            break
sock.close()
