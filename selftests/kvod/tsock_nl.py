#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Send one raw RTM_NEWQDISC for a root tsock qdisc, with whatever
TCA_OPTIONS attributes are given, and print the kernel's answer: "ok", or
"error ERRNO_NAME: extack message". tc's plugin only sends well-formed
options; this is how the tests reach the kernel's own checks.

usage: tsock_nl.py DEV [--change] [--flat] [ATTR=TYPE:VALUE ...] [-- ...]
  ATTR   TCA_TSOCK_* number (see uapi/linux/tsock.h)
  TYPE   u8, u16, u32, u64 or raw (VALUE in hex)
  --change  NLM_F_REPLACE on an existing qdisc instead of creating one
  --flat    leave NLA_F_NESTED off TCA_OPTIONS
  --        ends one request; the next one follows (one line of output
            each; the exit status is that of the last)
"""
import errno
import socket
import struct
import sys

RTM_NEWQDISC = 36
NLM_F_REQUEST, NLM_F_ACK = 0x1, 0x4
NLM_F_REPLACE, NLM_F_EXCL, NLM_F_CREATE = 0x100, 0x200, 0x400
NLMSG_ERROR = 2
NLA_F_NESTED = 0x8000
TCA_KIND, TCA_OPTIONS = 1, 2
TC_H_ROOT = 0xFFFFFFFF
NETLINK_EXT_ACK = 11
NLMSGERR_ATTR_MSG = 1
SOL_NETLINK = 270


def attr(kind, payload):
    n = 4 + len(payload)
    return struct.pack("HH", n, kind) + payload + b"\0" * ((4 - n % 4) % 4)


def value(spec):
    typ, _, val = spec.partition(":")
    if typ == "raw":
        return bytes.fromhex(val)
    fmt = {"u8": "B", "u16": "H", "u32": "I", "u64": "Q"}[typ]
    return struct.pack(fmt, int(val, 0))


def request(dev, args):
    flags, nested = NLM_F_CREATE | NLM_F_EXCL, NLA_F_NESTED
    opts = b""
    for a in args:
        if a == "--change":
            flags = NLM_F_REPLACE
        elif a == "--flat":
            nested = 0
        else:
            num, _, spec = a.partition("=")
            opts += attr(int(num), value(spec))
    ifindex = socket.if_nametoindex(dev)
    tcm = struct.pack("BxxxiIII", socket.AF_UNSPEC, ifindex, 0, TC_H_ROOT, 0)
    body = tcm + attr(TCA_KIND, b"tsock\0") + attr(TCA_OPTIONS | nested, opts)
    hdr = struct.pack("IHHII", 16 + len(body), RTM_NEWQDISC,
                      NLM_F_REQUEST | NLM_F_ACK | flags, 1, 0)
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    s.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
    s.send(hdr + body)
    msg = s.recv(65536)
    _, typ, mflags, _, _ = struct.unpack_from("IHHII", msg)
    if typ != NLMSG_ERROR:
        print("unexpected reply %d" % typ)
        return 2
    err = -struct.unpack_from("i", msg, 16)[0]
    if err == 0:
        print("ok")
        return 0
    # Skip the echoed request unless NLM_F_CAPPED (0x100) cut it.
    off = 20 + (16 if mflags & 0x100 else struct.unpack_from("I", msg, 20)[0])
    text = ""
    while off + 4 <= len(msg):
        n, kind = struct.unpack_from("HH", msg, off)
        if n < 4:
            break
        if kind == NLMSGERR_ATTR_MSG:
            text = msg[off + 4:off + n].rstrip(b"\0").decode()
        off += (n + 3) & ~3
    # The kernel's name for 95, which Python calls ENOTSUP.
    name = "EOPNOTSUPP" if err == errno.EOPNOTSUPP else \
        errno.errorcode.get(err, str(err))
    print("error %s: %s" % (name, text))
    return 1


def main(argv):
    ret, args = 0, []
    for a in argv[2:] + ["--"]:
        if a != "--":
            args.append(a)
            continue
        ret = request(argv[1], args)
        sys.stdout.flush()
        args = []
    return ret


if __name__ == "__main__":
    sys.exit(main(sys.argv))
