"""The wire codecs: round trips, sequence-number unwrapping, and rejection of anything
malformed with WireError (and nothing else)."""

import struct

import pytest
from hypothesis import given, settings, strategies as st

from reference.core.api import Ack, Data
from reference.wire import FORMATS, MAX_UDP_PAYLOAD, WireError, get_format, unwrap

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)

ALL = list(FORMATS)
comn, comn_le, ext = (get_format(n) for n in ("comn", "comn-le", "ext"))


def payloads(fmt):
    return st.binary(max_size=fmt.max_payload if fmt.max_payload < 2000 else 2000)


@pytest.mark.parametrize("name", ALL)
@settings(deadline=None)
@given(data=st.data())
def test_data_round_trip_near_the_reference(name, data):
    fmt = get_format(name)
    reference = data.draw(st.integers(0, 10**6))
    seq = data.draw(st.integers(max(0, reference - 2**14), reference + 2**14))
    path = data.draw(st.integers(0, 255)) if fmt.has_path else 0
    msg = Data(seq, data.draw(payloads(fmt)), data.draw(st.booleans()), path)
    assert fmt.decode_data(fmt.encode_data(msg), reference) == msg


@pytest.mark.parametrize("name", ALL)
@settings(deadline=None)
@given(data=st.data())
def test_ack_round_trip_including_minus_one(name, data):
    fmt = get_format(name)
    reference = data.draw(st.integers(0, 10**6))
    seq = data.draw(st.integers(max(-1, reference - 2**14), reference))
    sack = ()
    if fmt.has_sack:
        starts = data.draw(st.lists(st.integers(seq + 2, seq + 2**13), max_size=16, unique=True))
        sack = tuple((s, s + data.draw(st.integers(0, 5))) for s in sorted(starts))
    path = data.draw(st.integers(0, 255)) if fmt.has_path else 0
    ack = Ack(seq, sack, path)
    assert fmt.decode_ack(fmt.encode_ack(ack), reference) == ack


def test_comn_layout_in_both_byte_orders():
    msg = Data(0x0102, b"xyz", True)
    assert comn.encode_data(msg) == b"\x01\x02\x01xyz"
    assert comn_le.encode_data(msg) == b"\x02\x01\x01xyz"
    assert comn.encode_ack(Ack(0x0102)) == b"\x01\x02"
    assert comn_le.encode_ack(Ack(0x0102)) == b"\x02\x01"
    assert comn.encode_ack(Ack(-1)) == b"\xff\xff"


def test_sixteen_bit_numbers_unwrap_across_the_wrap():
    # packet 65537 goes out as 1; a receiver that has seen up to 65530 reads it back
    assert comn.decode_data(comn.encode_data(Data(65537, b"a")), 65530).seq == 65537
    # an old resend of 65530 read after 65537 was seen
    assert comn.decode_data(comn.encode_data(Data(65530, b"a")), 65537).seq == 65530
    assert comn.decode_ack(b"\xff\xff", 0).seq == -1
    assert comn.decode_ack(b"\xff\xff", 70000).seq == 65535
    assert unwrap(5, 2**32 + 3, 32) == 2**32 + 5


@settings(deadline=None)
@given(st.integers(-(2**40), 2**40), st.integers(-(2**14), 2**14), st.sampled_from([16, 32]))
def test_unwrap_inverts_wrapping_within_half_the_space(reference, offset, bits):
    value = reference + offset
    assert unwrap(value % (1 << bits), reference, bits) == value


@pytest.mark.parametrize("name", ALL)
@settings(max_examples=300, deadline=None)
@given(blob=st.binary(max_size=200) | st.binary(min_size=1020, max_size=1100))
def test_arbitrary_bytes_decode_or_raise_wire_error(name, blob):
    fmt = get_format(name)
    for decode in (fmt.decode_data, fmt.decode_ack):
        try:
            msg = decode(blob, 1000)
        except WireError:
            continue
        assert isinstance(msg, (Data, Ack))


@pytest.mark.parametrize("name", ALL)
def test_truncated_and_oversized_are_rejected(name):
    fmt = get_format(name)
    good = fmt.encode_data(Data(3, b"p" * 100))
    for bad in (b"", good[:2], good[: fmt.header_size - 1], good + b"\0" * (MAX_UDP_PAYLOAD + 1 - len(good))):
        with pytest.raises(WireError):
            fmt.decode_data(bad, 0)
    with pytest.raises(WireError):
        fmt.decode_ack(fmt.encode_ack(Ack(3))[:-1], 0)
    with pytest.raises(WireError):
        fmt.encode_data(Data(0, b"x" * (fmt.max_payload + 1)))


def test_comn_rejects_bad_eof_flag_and_wrong_sized_ack():
    with pytest.raises(WireError, match="end-of-file"):
        comn.decode_data(b"\x00\x01\x02data", 0)
    with pytest.raises(WireError):
        comn.decode_ack(b"\x00\x01\x00", 0)
    with pytest.raises(WireError):
        comn.decode_data(b"\x00\x00\x00" + b"x" * 1025, 0)


@settings(deadline=None)
@given(st.binary(max_size=300), st.data())
def test_ext_catches_any_single_bit_flip(payload, data):
    for wire in (ext.encode_data(Data(77, payload, True, 1)), ext.encode_ack(Ack(76, ((80, 90),), 1))):
        bit = data.draw(st.integers(0, len(wire) * 8 - 1))
        flipped = bytearray(wire)
        flipped[bit // 8] ^= 1 << (bit % 8)
        with pytest.raises(WireError):
            ext.decode_data(bytes(flipped), 77)
        with pytest.raises(WireError):
            ext.decode_ack(bytes(flipped), 77)


def test_ext_rejects_wrong_magic_type_and_flags_even_with_a_valid_crc():
    def forge(magic, kind, flags, body=b""):
        import zlib

        head = struct.pack(">BBBBII", magic, kind, flags, 0, 1, 0) + body
        return head[:8] + zlib.crc32(head).to_bytes(4, "big") + head[12:]

    with pytest.raises(WireError, match="magic"):
        ext.decode_data(forge(0xA2, 1, 0), 0)
    with pytest.raises(WireError, match="type"):
        ext.decode_data(forge(0xA1, 2, 0, b"\0"), 0)  # an ACK is not data
    with pytest.raises(WireError, match="flags"):
        ext.decode_data(forge(0xA1, 1, 0x80), 0)
    with pytest.raises(WireError, match="selective"):
        ext.decode_ack(forge(0xA1, 2, 0, b"\x02" + b"\0" * 8), 0)  # says 2 ranges, has 1
    with pytest.raises(WireError, match="backwards"):
        ext.decode_ack(forge(0xA1, 2, 0, b"\x01" + struct.pack(">II", 9, 5)), 0)


def test_ext_sends_at_most_sixteen_sack_ranges_and_fits_64k_payloads():
    many = tuple((i * 3, i * 3 + 1) for i in range(1, 30))
    ack = ext.decode_ack(ext.encode_ack(Ack(0, many)), 0)
    assert ack.sack == many[:16]
    biggest = ext.encode_data(Data(0, b"z" * ext.max_payload))
    assert len(biggest) == MAX_UDP_PAYLOAD


def test_unknown_format_name_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown wire format 'tcp'"):
        get_format("tcp")


def test_the_multihoming_starters_format_in_either_byte_order():
    """reference/wire.py's "mh" and "mh-le": seq u32 | flags | length u16 | MD5 | payload,
    ACK seq u32; a digest over the fields packed big-endian is taken too (a student who
    turned the header little-endian and kept the starter's digest helper)."""
    import hashlib

    for name, prefix in (("mh", ">"), ("mh-le", "<")):
        fmt = get_format(name)
        wire = fmt.encode_data(Data(70000, b"abc", True))
        assert wire[:7] == struct.pack(prefix + "IBH", 70000, 1, 3) and len(wire) == 23 + 3
        assert fmt.decode_data(wire, 69990) == Data(70000, b"abc", True)
        assert fmt.decode_ack(fmt.encode_ack(Ack(5)), 0).seq == 5
        damaged = bytearray(wire)
        damaged[-1] ^= 1
        with pytest.raises(WireError):
            fmt.decode_data(bytes(damaged))
    fields = struct.pack("<IBH", 7, 0, 2)
    kept_helper = fields + hashlib.md5(struct.pack(">IBH", 7, 0, 2) + b"hi").digest() + b"hi"
    assert get_format("mh-le").decode_data(kept_helper).seq == 7
