/* SPDX-License-Identifier: Apache-2.0 */
/* proto.h - the kperf-agent wire protocol (docs/protocol.md): framing, message encoding and
 * strict decoding, and the handshake's MACs. Pure functions over bytes: no sockets, no clocks,
 * no allocation, so the fuzz target can drive every decoder. Owns the limits every field is
 * checked against.
 *
 * A message is a 12-byte header (magic "KPRF", version, type, reserved 0, big-endian u32
 * payload length) and a payload whose length is fixed per type (REFUSE and RESULT have a
 * bounded variable part). The length is checked against PROTO_MAX_PAYLOAD before anything
 * reads the payload. HELLO and REFUSE keep their layout in every version and are always framed
 * as version 1 (PROTO_VERSION_STABLE), so peers of different versions still exchange a clear
 * refusal; every other message is framed with PROTO_VERSION. */
#ifndef KPERF_AGENT_PROTO_H
#define KPERF_AGENT_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "base/kp_err.h"

#define PROTO_MAGIC          0x4b505246u /* "KPRF" */
#define PROTO_VERSION        7 /* 5: CHALLENGE's kernel tag, SAME_KERNEL; 6: LOW_UNSENT; 7: COUNTERS */
#define PROTO_VERSION_STABLE 1 /* the framing of HELLO and REFUSE, in every version */
#define PROTO_HEADER_LEN     12
#define PROTO_MAX_PAYLOAD    8192
#define PROTO_NONCE_LEN      32
#define PROTO_MAC_LEN        32
#define PROTO_REASON_MAX     200
#define PROTO_FACTS_MAX      4000 /* FACTS: bytes of JSON text (printable ASCII) */
#define PROTO_COUNTERS_MAX   8000 /* COUNTERS: bytes of JSON text (printable ASCII) */
#define PROTO_KERNEL_TAG_LEN 16   /* CHALLENGE: proto_kernel_tag */

/* Hard limits of the protocol; a server may enforce lower ones. */
#define PROTO_MAX_STREAMS     128
#define PROTO_MAX_MSG_SIZE    (1u << 20) /* 1 MiB per write / request */
#define PROTO_MIN_UDP_SIZE    24         /* session id, sequence, timestamp */
#define PROTO_MAX_UDP_SIZE    65507
#define PROTO_MAX_DURATION_MS (24u * 3600u * 1000u)
#define PROTO_MAX_RATE_BPS    (400ull * 1000 * 1000 * 1000) /* 400 Gbit/s */
/* The server sends TCP keepalives on a control connection idle this long: during a test the
 * first packet on it after the handshake is the server's, unless the client speaks sooner. */
#define PROTO_CTRL_KEEPIDLE_S 10

/* UDP datagram header: session id, sequence number, sender's clock in ns (big-endian u64s). */
#define PROTO_UDP_HELLO_SEQ UINT64_MAX /* reverse UDP_STREAM: "send to this address" */

enum proto_type {
    PROTO_HELLO = 1,      /* C->S control: version range */
    PROTO_CHALLENGE = 2,  /* S->C: server nonce, whether a token is required */
    PROTO_AUTH = 3,       /* C->S: client nonce, client MAC (proto_auth_mac) */
    PROTO_TEST_REQ = 4,   /* C->S: test parameters */
    PROTO_ACCEPT = 5,     /* S->C: session id for data connections and datagrams */
    PROTO_REFUSE = 6,     /* S->C: code and one-line reason; the server then closes */
    PROTO_DATA_HELLO = 7, /* C->S data connection: session id, stream index */
    PROTO_DATA_OK = 8,    /* S->C data connection attached (not sent for TCP_CRR) */
    PROTO_UDP_READY = 9,  /* S->C control: the client's UDP address is known */
    PROTO_START = 10,     /* C->S: begin the measurement */
    PROTO_STARTED = 11,   /* S->C */
    PROTO_STOP = 12,      /* C->S: client's counters; the server finishes and reports */
    PROTO_RESULT = 13,    /* S->C: the server's side of the measurement */
    PROTO_AUTH_OK = 14,   /* S->C: server MAC, the server's proof that it knows the token */
    PROTO_FACTS = 15,     /* S->C after ACCEPT, when TEST_REQ asked: the server host's facts */
    PROTO_COUNTERS = 16,  /* S->C before RESULT, when TEST_REQ asked: the server's counters */
    PROTO_TYPE_MAX = 16,
};

/* Test numbers on the wire: the protocol, never renumbered. Each is the `wire` id of its
 * entry in base/testkind.h, where the test's name and properties live (test_proto checks
 * that they agree). */
enum proto_test {
    PROTO_TCP_RR = 1,
    PROTO_TCP_CRR = 2,
    PROTO_TCP_STREAM = 3,
    PROTO_TCP_STREAM_MULTI = 4,
    PROTO_UDP_RR = 5,
    PROTO_UDP_STREAM = 6,
    PROTO_TCP_RR_LOADED = 7, /* client-side only: TCP_RR + TCP_STREAM_MULTI at once; never in
                              * TEST_REQ (proto_check_test_req refuses it) */
};

enum proto_refuse_code {
    PROTO_REFUSE_AUTH = 1,
    PROTO_REFUSE_BUSY = 2,
    PROTO_REFUSE_BAD_REQUEST = 3,
    PROTO_REFUSE_LIMIT = 4,
    PROTO_REFUSE_VERSION = 5,
    PROTO_REFUSE_INTERNAL = 6,
    PROTO_REFUSE_TIMEOUT = 7,
};

/* Why a reverse UDP_STREAM's sender stopped before STOP (RESULT's udp_stop). */
enum proto_udp_stop {
    PROTO_UDP_STOP_NONE = 0,        /* it sent until STOP (or never ran) */
    PROTO_UDP_STOP_UNREACHABLE = 1, /* an ICMP error came back: nobody receives there */
    PROTO_UDP_STOP_SILENT = 2,      /* no keep-alive from the receiver for PROTO_UDP_SILENT_MS */
    PROTO_UDP_STOP_SEND_FAILED = 3, /* a send failed for another reason */
    PROTO_UDP_STOP_MAX = 3,
};

/* Reverse UDP_STREAM: the receiver sends a keep-alive (a UDP hello) this often, and the sender
 * stops when it has heard none for PROTO_UDP_SILENT_MS. */
#define PROTO_UDP_KEEPALIVE_MS 100
#define PROTO_UDP_SILENT_MS    1000

/* Which side a handshake MAC proves knowledge of the token for (distinct labels, so that one
 * side's MAC is never valid as the other's). */
enum proto_auth_side {
    PROTO_AUTH_CLIENT, /* AUTH: "kperf-auth-v2-client" */
    PROTO_AUTH_SERVER, /* AUTH_OK: "kperf-auth-v2-server" */
};

enum proto_status {
    PROTO_OK = 0,     /* a whole message was decoded */
    PROTO_AGAIN = 1,  /* need more bytes */
    PROTO_ERROR = -1, /* malformed; err says why; the connection must be dropped */
};

#define PROTO_FLAG_REVERSE 0x01u
#define PROTO_FLAG_FACTS   0x02u /* TEST_REQ: send FACTS after ACCEPT (any test) */
/* TEST_REQ, TCP stream tests: client and server share a kernel (their kernel tags agree) and
 * the client multiplexes its streams; the server does too (docs/protocol.md, "Same kernel"). */
#define PROTO_FLAG_SAME_KERNEL 0x04u
/* TEST_REQ, TCP stream tests: the sending end keeps at most PROTO_LOW_UNSENT_BYTES unsent on
 * each stream (TCP_NOTSENT_LOWAT). The client sets it when client and server share a kernel
 * and the streams run on threads of their own over more than one CPU (docs/protocol.md, "Same
 * kernel"). */
#define PROTO_FLAG_LOW_UNSENT  0x08u
#define PROTO_LOW_UNSENT_BYTES (128 * 1024)
/* TEST_REQ, any test: the server sends COUNTERS (its kernel and NIC counters' deltas over the
 * window, agent/counters.h) right before RESULT. */
#define PROTO_FLAG_COUNTERS 0x10u
#define PROTO_FLAG_AUTH     0x01u /* CHALLENGE: the server requires a token */

struct proto_header {
    uint8_t type;
    uint32_t length;
};

struct proto_test_req {
    uint8_t test; /* enum proto_test */
    uint8_t flags;
    uint16_t streams;
    uint32_t msg_size;
    uint32_t duration_ms;
    uint32_t omit_ms;
    uint64_t rate_bps; /* UDP_STREAM only; 0 otherwise */
};

struct proto_stream_stats {
    uint64_t rx_bytes;
    uint64_t tx_bytes;
    uint32_t retransmits;
    uint32_t rtt_us;
    uint32_t mss;
    uint64_t cpu_us; /* the stream's server thread: CPU time over the window */
    uint32_t cpu;    /* ... the CPU it last ran on; PROTO_CPU_UNKNOWN: no thread of its own */
};

#define PROTO_CPU_UNKNOWN 0xffffffffu
#define PROTO_MAX_CPUS    65536u /* a stream's cpu is below this, or unknown */

/* Node CPU jiffies over the window, in /proc/stat order. */
enum {
    PROTO_CPU_USER,
    PROTO_CPU_NICE,
    PROTO_CPU_SYSTEM,
    PROTO_CPU_IDLE,
    PROTO_CPU_IOWAIT,
    PROTO_CPU_IRQ,
    PROTO_CPU_SOFTIRQ,
    PROTO_CPU_STEAL,
    PROTO_CPU_FIELDS
};

struct proto_result {
    uint64_t window_ns;   /* the server's measurement window */
    uint64_t rx_bytes;    /* received in the window (all streams) */
    uint64_t tx_bytes;    /* sent in the window */
    uint64_t rx_total;    /* received over the whole test, incl. warm-up */
    uint64_t cpu_user_us; /* server process CPU over the window */
    uint64_t cpu_sys_us;
    uint64_t node_cpu[PROTO_CPU_FIELDS];
    uint32_t mtu;
    uint64_t udp_received; /* datagrams received (sink) or echoed (UDP_RR) */
    uint64_t udp_sent;     /* datagrams sent (reverse UDP_STREAM) */
    uint64_t udp_out_of_order;
    uint64_t udp_max_seq_plus1;
    uint64_t udp_jitter_ns;
    uint64_t udp_rcvbuf_errors;
    uint64_t udp_send_ns; /* reverse UDP_STREAM: how long the server sent */
    uint16_t udp_stop;    /* enum proto_udp_stop */
    uint16_t nstreams;
    struct proto_stream_stats streams[PROTO_MAX_STREAMS];
};

#define PROTO_RESULT_FIXED_LEN (8 * 13 + 8 * PROTO_CPU_FIELDS + 4 + 2 + 2)
#define PROTO_STREAM_STATS_LEN 40

/* A message as decoded; which member is valid depends on type. */
struct proto_msg {
    uint8_t type;
    union {
        struct {
            uint16_t version_min, version_max;
        } hello;
        struct {
            uint8_t nonce[PROTO_NONCE_LEN];
            uint32_t flags;
            uint8_t kernel[PROTO_KERNEL_TAG_LEN]; /* proto_kernel_tag; all 0: unknown */
        } challenge;
        struct {
            uint8_t nonce[PROTO_NONCE_LEN]; /* the client's contribution */
            uint8_t mac[PROTO_MAC_LEN];
        } auth;
        struct {
            uint8_t mac[PROTO_MAC_LEN];
        } auth_ok;
        struct proto_test_req test_req;
        struct {
            uint64_t session;
        } accept;
        struct {
            uint16_t code;
            char reason[PROTO_REASON_MAX + 1]; /* NUL-terminated, printable ASCII */
        } refuse;
        struct {
            uint64_t session;
            uint16_t stream;
        } data_hello;
        struct {
            uint64_t sent_bytes;
            uint64_t udp_sent;
        } stop;
        struct proto_result result;
        struct {
            char text[PROTO_FACTS_MAX + 1]; /* NUL-terminated JSON, printable ASCII */
        } facts;
        struct {
            char text[PROTO_COUNTERS_MAX + 1]; /* NUL-terminated JSON, printable ASCII */
        } counters;
    } u;
};

/* Decodes the header at buf[0..len). PROTO_AGAIN below 12 bytes; PROTO_ERROR for a wrong
 * magic/version/reserved, unknown type, or a length above the type's bound. The version must
 * be PROTO_VERSION_STABLE for HELLO and REFUSE, PROTO_VERSION for every other type. */
KP_MUST_CHECK enum proto_status proto_decode_header(const uint8_t *buf, size_t len,
                                                    struct proto_header *h, struct kp_err *err);

/* Decodes one whole message from buf[0..len): PROTO_OK with *used = bytes consumed,
 * PROTO_AGAIN when incomplete, PROTO_ERROR when malformed (every field is range-checked;
 * a test request is checked against the protocol's hard limits, not a server's caps). */
KP_MUST_CHECK enum proto_status proto_decode(const uint8_t *buf, size_t len, struct proto_msg *m,
                                             size_t *used, struct kp_err *err);

/* Checks a test request against the protocol's hard limits. Returns 0 or -1 with err. */
KP_MUST_CHECK int proto_check_test_req(const struct proto_test_req *r, struct kp_err *err);

/* Encodes m into out (cap bytes). Returns the length written, or 0 if it does not fit or m is
 * not encodable (e.g. a reason with non-printable bytes is sanitised, never rejected). */
KP_MUST_CHECK size_t proto_encode(const struct proto_msg *m, uint8_t *out, size_t cap);

/* HMAC-SHA256(token, label || server_nonce || client_nonce), the label naming the side that
 * proves it knows the token: the client in AUTH, the server in AUTH_OK. Both nonces are fresh
 * (getrandom) per connection, so neither side alone picks what the other one signs. */
void proto_auth_mac(const void *token, size_t token_len, enum proto_auth_side side,
                    const uint8_t server_nonce[PROTO_NONCE_LEN],
                    const uint8_t client_nonce[PROTO_NONCE_LEN], uint8_t mac[PROTO_MAC_LEN]);

/* SHA-256("kperf-kernel-v1" || server_nonce || boot_id), first PROTO_KERNEL_TAG_LEN bytes:
 * equal on both ends exactly when they run on one kernel (one boot), without telling the
 * peer the boot id itself. An empty boot_id (unreadable) gives all zeros, which never
 * matches. */
void proto_kernel_tag(const uint8_t server_nonce[PROTO_NONCE_LEN], const char *boot_id,
                      size_t boot_id_len, uint8_t tag[PROTO_KERNEL_TAG_LEN]);
/* 1 when both tags are known (not all zero) and equal. */
int proto_kernel_tag_same(const uint8_t a[PROTO_KERNEL_TAG_LEN],
                          const uint8_t b[PROTO_KERNEL_TAG_LEN]);

/* Test names ("TCP_RR"...) and back, through base/testkind.h; name lookup is exact.
 * proto_test_name gives "UNKNOWN" and proto_test_from_name 0 for an unknown test. */
const char *proto_test_name(uint8_t test);
uint8_t proto_test_from_name(const char *name);
int proto_test_is_udp(uint8_t test);
int proto_test_is_stream(uint8_t test);
const char *proto_type_name(uint8_t type);

/* UDP datagram header (24 bytes), big-endian. */
void proto_udp_put(uint8_t *buf, uint64_t session, uint64_t seq, uint64_t ts_ns);
void proto_udp_get(const uint8_t *buf, uint64_t *session, uint64_t *seq, uint64_t *ts_ns);

#endif
