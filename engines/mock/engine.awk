# Protocol version 1 engine in portable awk (mawk, gawk, busybox). Ciphers:
#   TOY-ADD  block family, 64-bit key, byte i of the ciphertext = (p[i] + k[i mod 8]) mod 256
#   TOY-DIE  like TOY-ADD, but its bench prints one sample and exits (a crashing engine)
# Times are synthetic (1000 + size-bits ns), so tests can check them exactly.
# LWCBENCH_MOCK_FAULT makes it misbehave for lwcbench's tests:
#   wrong-ct       encrypt answers a ciphertext whose first byte is off by one
#   ns=VALUE       every sample reports ns=VALUE (0, -0, 5e-324, 1e308, nan, -5 ...)
#   endless-list   `list` sends cipher lines forever
#   hang-bench     bench starts a child `sleep 300` (pid in $LWCBENCH_MOCK_PIDFILE) and hangs
BEGIN {
    for (i = 0; i < 256; i++) { h = sprintf("%02x", i); V[h] = i; H[i] = h }
    FAULT = ENVIRON["LWCBENCH_MOCK_FAULT"]
}
function reply(s) { print s; fflush() }
function fail(code, msg) { reply("err " code " " msg); return 0 }
# Split name=value arguments into A; returns "" or an error message.
function parse(allowed,   i, p, k) {
    split("", A)
    for (i = 2; i <= NF; i++) {
        p = index($i, "=")
        if (p == 0) return $i " is not name=value"
        k = substr($i, 1, p - 1)
        if (index(" " allowed " ", " " k " ") == 0) return "unknown parameter " k
        A[k] = substr($i, p + 1)
    }
    return ""
}
function ishex(s) { return tolower(s) ~ /^([0-9a-f][0-9a-f])*$/ }
# (p + k) or (p - k) byte-wise, key repeated; sign = 1 or -1.
function addkey(data, key, sign,   n, i, out, b, k) {
    data = tolower(data); key = tolower(key); n = length(data) / 2; out = ""
    for (i = 0; i < n; i++) {
        b = V[substr(data, 2 * i + 1, 2)]
        k = V[substr(key, 2 * (i % 8) + 1, 2)]
        out = out H[(b + sign * k + 256) % 256]
    }
    return out
}
function cipher_ok(c) {
    if (c != "TOY-ADD" && c != "TOY-DIE") return fail("unknown-cipher", "unknown cipher " c)
    return 1
}
function key_ok(k) {
    if (!ishex(k)) return fail("bad-argument", "key: not hex")
    if (length(k) != 16) return fail("bad-argument", "key: TOY ciphers need 8 bytes")
    return 1
}
{
    sub(/\r$/, "")
    if ($0 == "" || substr($0, 1, 1) == "#") next
    cmd = $1
    if (cmd == "hello") {
        if ((e = parse("protocol")) != "") { fail("bad-argument", e); next }
        if (A["protocol"] != "1") { fail("version", "this engine speaks protocol 1"); next }
        reply("ok protocol=1 engine=mock-awk engine-version=1 implementation=mock-awk language=C timer=synthetic resolution-ns=1 note=test%20engine:%20toy%20cipher,%20synthetic%20times")
    } else if (cmd == "list") {
        if (FAULT == "endless-list") while (1) reply("cipher name=TOY-" (n_endless++) " family=block key-bits=64 iv-bits=0 block-bits=8 tag-bits=0 scenarios=encrypt")
        reply("cipher name=TOY-ADD family=block key-bits=64 iv-bits=0 block-bits=8 tag-bits=0 scenarios=encrypt,decrypt")
        reply("cipher name=TOY-DIE family=block key-bits=64 iv-bits=0 block-bits=8 tag-bits=0 scenarios=encrypt")
        reply("end count=2")
    } else if (cmd == "encrypt" || cmd == "decrypt") {
        data = (cmd == "encrypt") ? "pt" : "ct"
        if ((e = parse("cipher key iv aad tag tag-bits " data)) != "") { fail("bad-argument", e); next }
        if (!cipher_ok(A["cipher"]) || !key_ok(A["key"])) next
        if (!ishex(A[data])) { fail("bad-argument", data ": not hex"); next }
        if (A["iv"] != "" || A["aad"] != "" || A["tag"] != "") { fail("bad-argument", "TOY ciphers take no iv, aad or tag"); next }
        if (cmd == "encrypt" && FAULT == "wrong-ct") {
            ct = addkey(A["pt"], A["key"], 1)
            reply("ok ct=" H[(V[substr(ct, 1, 2)] + 1) % 256] substr(ct, 3) " tag=")
        } else if (cmd == "encrypt") reply("ok ct=" addkey(A["pt"], A["key"], 1) " tag=")
        else reply("ok pt=" addkey(A["ct"], A["key"], -1))
    } else if (cmd == "bench") {
        if ((e = parse("cipher scenario kiv size-bits key iv seed reps warmup batch min-sample-ns pattern")) != "") { fail("bad-argument", e); next }
        if (!cipher_ok(A["cipher"]) || !key_ok(A["key"])) next
        if (A["scenario"] != "encrypt" && !(A["scenario"] == "decrypt" && A["cipher"] == "TOY-ADD")) { fail("unsupported", "scenario " A["scenario"]); next }
        reps = A["reps"] + 0; warm = A["warmup"] + 0; n = reps + warm
        if (reps < 1) { fail("bad-argument", "reps: at least 1"); next }
        if (FAULT == "hang-bench") {
            system("sleep 300 & echo $! > \"$LWCBENCH_MOCK_PIDFILE\"; wait")
            next
        }
        ns = (1000 + A["size-bits"])
        if (substr(FAULT, 1, 3) == "ns=") ns = substr(FAULT, 4)
        for (i = 0; i < n; i++) {
            reply("sample rep=" i " warmup=" (i < warm ? 1 : 0) " batch=1 ns=" ns)
            if (A["cipher"] == "TOY-DIE") exit 1
        }
        reply("end count=" n " batch=1")
    } else if (cmd == "quit") {
        reply("ok bye"); exit 0
    } else {
        fail("unknown-command", "unknown command " cmd)
    }
}
