// fastdds_perf: the Fast DDS 2.9 side of the benchmark harness (Debian libfastrtps-dev 2.9.x,
// libfastcdr 1.x). Same modes and options as `tachyon perf`; results in the `tachyon-perf/1`
// JSON of bench/SCHEMA.md. Built by bench/build-peers.sh into target/bench/fastdds_perf.
//
//   fastdds_perf ping|pong|pub|sub|intra [options]   (fastdds_perf --help lists them)
//
// `intra` runs ping and pong in one process, as two participants (as `tachyon perf intra`):
// Fast DDS then delivers between them in process (its intraprocess delivery, on by default in
// 2.9: the writer hands the sample to the reader on the writing thread, no transport), for
// the harness's in-process scenario. `--delivery poll` takes in a loop on an application
// thread that never sleeps (with `intra`: ping and pong are two such threads).
//
// Types are hand-written type supports over fastcdr (no fastddsgen), plain CDR (XCDR1)
// little-endian, which is what Fast DDS 2.9 writes:
//   simple  = KeyedSeq    { uint32 seq; @key uint32 keyval; sequence<octet> baggage; }  (ddsperf's)
//   complex = PerfComplex { uint32 seq; @key uint32 keyval; sequence<PerfItem> items; }
//             PerfItem    { string name; int64 value; uint32 flags; }
// UDPv4 is the only transport by default (no shared memory, no data sharing), so every
// implementation is measured over the same kernel path; `--transport shm` gives Fast DDS its
// default transports instead (shared memory between processes of a host, UDPv4 beside it), for
// the harness's same-host scenario. Data sharing stays off (the types are not plain anyway). Latency goes into a preallocated log histogram (7 mantissa
// bits, buckets under 0.8 % wide); nothing is allocated per sample on the measuring path.

#include <fastdds/dds/core/condition/GuardCondition.hpp>
#include <fastdds/dds/core/condition/WaitSet.hpp>
#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/domain/qos/DomainParticipantQos.hpp>
#include <fastdds/dds/log/Log.hpp>
#include <fastdds/dds/log/StdoutErrConsumer.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/publisher/qos/DataWriterQos.hpp>
#include <fastdds/dds/publisher/qos/PublisherQos.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/DataReaderListener.hpp>
#include <fastdds/dds/subscriber/ReadCondition.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/subscriber/qos/DataReaderQos.hpp>
#include <fastdds/dds/subscriber/qos/SubscriberQos.hpp>
#include <fastdds/dds/topic/Topic.hpp>
#include <fastdds/dds/topic/TopicDataType.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastrtps/config.h>
#include <fastrtps/utils/md5.h>

#include <fastcdr/Cdr.h>
#include <fastcdr/FastBuffer.h>

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace eprosima::fastdds::dds;
using eprosima::fastrtps::rtps::InstanceHandle_t;
using eprosima::fastrtps::rtps::SerializedPayload_t;
using FDuration = eprosima::fastrtps::Duration_t;

namespace {

// ---------------------------------------------------------------------------------------------
// Options

enum class Mode { Ping, Pong, Pub, Sub, Intra };

struct Options
{
    Mode mode = Mode::Ping;
    const char* mode_name = "ping";
    int domain = 0;
    long size = 0;
    bool complex = false;
    bool reliable = true;
    bool keep_all = false;
    long depth = 1;
    bool transient_local = false;
    long keys = 1;
    bool waitset = false;
    bool poll = false;
    bool shm = false;
    double rate = 0.0; // 0 = unlimited
    long burst = 1;
    double duration = 10.0;
    bool duration_given = false;
    long count = 0; // 0 = no limit
    double warmup = 1.0;
    long subscribers = 1;
    const char* json = nullptr;
    bool quiet = false;
};

Options opt;

// Whether an application thread takes the samples (no listener on the reader).
bool app_thread()
{
    return opt.waitset || opt.poll;
}

const char* const USAGE =
        "usage: fastdds_perf ping|pong|pub|sub|intra [options]\n"
        "  --domain N                         DDS domain (0)\n"
        "  --unicast                          accepted: Fast DDS sends user data by unicast anyway\n"
        "  --size N                           payload octets, 12 of seq and key included (0 or >= 12)\n"
        "  --type simple|complex              KeyedSeq or PerfComplex (simple)\n"
        "  --reliability reliable|best-effort (reliable)\n"
        "  --history keep-last|keep-all       pub/sub data history (keep-last)\n"
        "  --depth N                          keep-last depth of pub/sub data (1)\n"
        "  --durability volatile|transient-local (volatile)\n"
        "  --keys N                           keyval cycles 0..N-1 (1)\n"
        "  --delivery listener|waitset|poll   how samples are received (listener)\n"
        "  --transport udp|shm                UDPv4 only, or Fast DDS's builtin shared memory + UDPv4 (udp)\n"
        "  --rate HZ                          ping: pings/s, pub: samples/s (unlimited)\n"
        "  --burst N                          pub: samples per burst (1)\n"
        "  --duration SECS                    measured part (10)\n"
        "  --count N                          ping: stop after N measured round trips\n"
        "  --warmup SECS                      not counted (1)\n"
        "  --subscribers N                    ping/pub: readers to wait for (1)\n"
        "  --json PATH                        tachyon-perf/1 result ('-' = stdout)\n"
        "  --quiet                            no per-second line on stderr\n";

[[noreturn]] void usage_error(
        const char* fmt,
        ...) __attribute__((format(printf, 1, 2)));

[[noreturn]] void usage_error(
        const char* fmt,
        ...)
{
    std::fputs("fastdds_perf: ", stderr);
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(stderr, fmt, ap);
    va_end(ap);
    std::fputs("\n", stderr);
    std::fputs(USAGE, stderr);
    std::exit(2);
}

long parse_long(
        const char* name,
        const char* v,
        long min,
        long max)
{
    char* end = nullptr;
    errno = 0;
    long x = std::strtol(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || x < min || x > max)
    {
        usage_error("bad value for %s: '%s' (an integer from %ld to %ld)", name, v, min, max);
    }
    return x;
}

double parse_double(
        const char* name,
        const char* v,
        double min,
        double max)
{
    char* end = nullptr;
    errno = 0;
    double x = std::strtod(v, &end);
    if (errno != 0 || end == v || *end != '\0' || !std::isfinite(x) || x < min || x > max)
    {
        usage_error("bad value for %s: '%s' (a number from %g to %g)", name, v, min, max);
    }
    return x;
}

bool parse_choice(
        const char* name,
        const char* v,
        const char* yes,
        const char* no)
{
    if (std::strcmp(v, yes) == 0)
    {
        return true;
    }
    if (std::strcmp(v, no) == 0)
    {
        return false;
    }
    usage_error("bad value for %s: '%s' (%s or %s)", name, v, yes, no);
}

void parse_options(
        int argc,
        char** argv)
{
    if (argc >= 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0))
    {
        std::fputs(USAGE, stdout);
        std::exit(0);
    }
    if (argc < 2)
    {
        usage_error("missing mode");
    }
    opt.mode_name = argv[1];
    if (std::strcmp(argv[1], "ping") == 0)
    {
        opt.mode = Mode::Ping;
    }
    else if (std::strcmp(argv[1], "pong") == 0)
    {
        opt.mode = Mode::Pong;
    }
    else if (std::strcmp(argv[1], "pub") == 0)
    {
        opt.mode = Mode::Pub;
    }
    else if (std::strcmp(argv[1], "sub") == 0)
    {
        opt.mode = Mode::Sub;
    }
    else if (std::strcmp(argv[1], "intra") == 0)
    {
        opt.mode = Mode::Intra;
    }
    else
    {
        usage_error("unknown mode '%s' (ping, pong, pub, sub or intra)", argv[1]);
    }
    for (int i = 2; i < argc; ++i)
    {
        std::string arg = argv[i];
        std::string name = arg;
        const char* value = nullptr;
        std::string inline_value;
        size_t eq = arg.find('=');
        if (arg.rfind("--", 0) == 0 && eq != std::string::npos)
        {
            name = arg.substr(0, eq);
            inline_value = arg.substr(eq + 1);
            value = inline_value.c_str();
        }
        const char* n = name.c_str();
        if (name == "--unicast")
        {
            // User data is unicast already (see "multicast" in the JSON); discovery stays as
            // Fast DDS does it. Accepted so the harness passes the same options everywhere.
            if (value != nullptr)
            {
                usage_error("%s takes no value", n);
            }
            continue;
        }
        if (name == "--quiet")
        {
            if (value != nullptr)
            {
                usage_error("%s takes no value", n);
            }
            opt.quiet = true;
            continue;
        }
        if (name == "--help" || name == "-h")
        {
            std::fputs(USAGE, stdout);
            std::exit(0);
        }
        static const char* const valued[] = {
            "--domain", "--size", "--type", "--reliability", "--history", "--depth", "--durability",
            "--keys", "--delivery", "--transport", "--rate", "--burst", "--duration", "--count",
            "--warmup", "--subscribers", "--json"
        };
        bool known = false;
        for (const char* k : valued)
        {
            known |= name == k;
        }
        if (!known)
        {
            usage_error("unknown option '%s'", argv[i]);
        }
        if (value == nullptr)
        {
            if (i + 1 >= argc)
            {
                usage_error("option %s needs a value", n);
            }
            value = argv[++i];
        }
        if (name == "--domain")
        {
            opt.domain = static_cast<int>(parse_long(n, value, 0, 232));
        }
        else if (name == "--size")
        {
            opt.size = parse_long(n, value, 0, 64L * 1024 * 1024);
            if (opt.size != 0 && opt.size < 12)
            {
                usage_error("--size %ld: too small for the sequence number and key (0, or 12 and more)",
                        opt.size);
            }
        }
        else if (name == "--type")
        {
            opt.complex = parse_choice(n, value, "complex", "simple");
        }
        else if (name == "--reliability")
        {
            opt.reliable = parse_choice(n, value, "reliable", "best-effort");
        }
        else if (name == "--history")
        {
            opt.keep_all = parse_choice(n, value, "keep-all", "keep-last");
        }
        else if (name == "--depth")
        {
            opt.depth = parse_long(n, value, 1, 10000);
        }
        else if (name == "--durability")
        {
            opt.transient_local = parse_choice(n, value, "transient-local", "volatile");
        }
        else if (name == "--keys")
        {
            opt.keys = parse_long(n, value, 1, 10000);
        }
        else if (name == "--delivery")
        {
            opt.poll = std::strcmp(value, "poll") == 0;
            opt.waitset = !opt.poll && parse_choice(n, value, "waitset", "listener");
        }
        else if (name == "--transport")
        {
            opt.shm = parse_choice(n, value, "shm", "udp");
        }
        else if (name == "--rate")
        {
            opt.rate = parse_double(n, value, 1e-3, 1e9);
        }
        else if (name == "--burst")
        {
            opt.burst = parse_long(n, value, 1, 1000000);
        }
        else if (name == "--duration")
        {
            opt.duration = parse_double(n, value, 1e-3, 1e6);
            opt.duration_given = true;
        }
        else if (name == "--count")
        {
            opt.count = parse_long(n, value, 1, LONG_MAX);
        }
        else if (name == "--warmup")
        {
            opt.warmup = parse_double(n, value, 0.0, 1e6);
        }
        else if (name == "--subscribers")
        {
            opt.subscribers = parse_long(n, value, opt.mode == Mode::Ping || opt.mode == Mode::Intra ? 1 : 0, 1000);
        }
        else if (name == "--json")
        {
            if (*value == '\0')
            {
                usage_error("bad value for --json: empty path");
            }
            opt.json = value;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Time, signals, CPU

std::atomic<bool> g_stop{false};

extern "C" void on_signal(
        int)
{
    g_stop.store(true);
}

inline int64_t now_ns()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now().time_since_epoch()).count();
}

constexpr int64_t NS = 1000000000;

int64_t secs_to_ns(
        double s)
{
    return static_cast<int64_t>(std::llround(s * 1e9));
}

// Sleeps until `t` (steady ns), waking early when a signal arrives.
void sleep_until_ns(
        int64_t t)
{
    for (;;)
    {
        int64_t d = t - now_ns();
        if (d <= 0 || g_stop.load())
        {
            return;
        }
        std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<int64_t>(d, 50000000)));
    }
}

FDuration to_duration(
        int64_t ns)
{
    if (ns < 0)
    {
        ns = 0;
    }
    return FDuration(static_cast<int32_t>(ns / NS), static_cast<uint32_t>(ns % NS));
}

struct CpuMark
{
    int64_t wall = 0;
    double user = 0.0;
    double sys = 0.0;
    long maxrss_kib = 0;
};

CpuMark cpu_mark()
{
    struct rusage ru;
    std::memset(&ru, 0, sizeof ru);
    getrusage(RUSAGE_SELF, &ru);
    CpuMark m;
    m.wall = now_ns();
    m.user = static_cast<double>(ru.ru_utime.tv_sec) + static_cast<double>(ru.ru_utime.tv_usec) / 1e6;
    m.sys = static_cast<double>(ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_stime.tv_usec) / 1e6;
    m.maxrss_kib = ru.ru_maxrss;
    return m;
}

// ---------------------------------------------------------------------------------------------
// Latency histogram: values below 128 ns exact, above that 128 buckets per power of two
// (index from the bit length and the 7 bits after the leading one). Preallocated, no
// allocation when recording.

class Histogram
{
public:

    static constexpr int SUB = 128;
    static constexpr int NBUCKETS = SUB + 57 * SUB;

    Histogram()
        : buckets_(NBUCKETS, 0)
    {
    }

    static int index(
            uint64_t v)
    {
        if (v < static_cast<uint64_t>(SUB))
        {
            return static_cast<int>(v);
        }
        int bits = 64 - __builtin_clzll(v); // >= 8
        int shift = bits - 8;
        int mant = static_cast<int>(v >> shift) - SUB; // 0..127
        return SUB + shift * SUB + mant;
    }

    // The largest value that falls into bucket `i`.
    static uint64_t upper(
            int i)
    {
        if (i < SUB)
        {
            return static_cast<uint64_t>(i);
        }
        int shift = (i - SUB) / SUB;
        uint64_t mant = static_cast<uint64_t>((i - SUB) % SUB);
        unsigned __int128 u = (static_cast<unsigned __int128>(SUB + mant + 1) << shift) - 1;
        return u > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(u);
    }

    void add(
            uint64_t v)
    {
        ++buckets_[static_cast<size_t>(index(v))];
        ++count_;
        min_ = std::min(min_, v);
        max_ = std::max(max_, v);
    }

    void reset()
    {
        std::fill(buckets_.begin(), buckets_.end(), 0);
        count_ = 0;
        min_ = UINT64_MAX;
        max_ = 0;
    }

    uint64_t count() const
    {
        return count_;
    }

    uint64_t min() const
    {
        return count_ == 0 ? 0 : min_;
    }

    uint64_t max() const
    {
        return max_;
    }

    // The value at quantile q: upper bound of the bucket holding the ceil(q*count)-th smallest,
    // clamped to the exact min and max.
    uint64_t quantile(
            double q) const
    {
        if (count_ == 0)
        {
            return 0;
        }
        uint64_t rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_)));
        rank = std::max<uint64_t>(1, std::min(rank, count_));
        uint64_t cum = 0;
        for (int i = 0; i < NBUCKETS; ++i)
        {
            cum += buckets_[static_cast<size_t>(i)];
            if (cum >= rank)
            {
                return std::max(min_, std::min(max_, upper(i)));
            }
        }
        return max_;
    }

    const std::vector<uint64_t>& buckets() const
    {
        return buckets_;
    }

private:

    std::vector<uint64_t> buckets_;
    uint64_t count_ = 0;
    uint64_t min_ = UINT64_MAX;
    uint64_t max_ = 0;
};

// Running mean/variance (Welford) and packet-delay variation (mean |rtt[i] - rtt[i-1]|).
struct RunningStats
{
    uint64_t n = 0;
    double mean = 0.0;
    double m2 = 0.0;
    double pdv_sum = 0.0;
    uint64_t pdv_n = 0;
    int64_t last = -1;

    void add(
            int64_t x)
    {
        ++n;
        double d = static_cast<double>(x) - mean;
        mean += d / static_cast<double>(n);
        m2 += d * (static_cast<double>(x) - mean);
        if (last >= 0)
        {
            pdv_sum += static_cast<double>(std::llabs(x - last));
            ++pdv_n;
        }
        last = x;
    }

    double stddev() const
    {
        return n > 1 ? std::sqrt(m2 / static_cast<double>(n - 1)) : 0.0;
    }

    double pdv() const
    {
        return pdv_n > 0 ? pdv_sum / static_cast<double>(pdv_n) : 0.0;
    }
};

// ---------------------------------------------------------------------------------------------
// Data types and their type supports

struct KeyedSeq
{
    uint32_t seq = 0;
    uint32_t keyval = 0;
    std::vector<uint8_t> baggage;
};

struct PerfItem
{
    std::string name;
    int64_t value = 0;
    uint32_t flags = 0;
};

struct PerfComplex
{
    uint32_t seq = 0;
    uint32_t keyval = 0;
    std::vector<PerfItem> items;
};

inline size_t align_to(
        size_t pos,
        size_t a)
{
    return (pos + a - 1) & ~(a - 1);
}

// Serialized size after the 4-octet encapsulation header (alignment is relative to its end).
size_t cdr_size(
        const KeyedSeq& s)
{
    return 12 + s.baggage.size();
}

size_t cdr_size(
        const PerfComplex& s)
{
    size_t pos = 12;
    for (const PerfItem& it : s.items)
    {
        pos = align_to(pos, 4) + 4 + it.name.size() + 1;
        pos = align_to(pos, 8) + 8;
        pos += 4;
    }
    return pos;
}

void cdr_write(
        eprosima::fastcdr::Cdr& c,
        const KeyedSeq& s)
{
    c << s.seq << s.keyval << s.baggage;
}

void cdr_read(
        eprosima::fastcdr::Cdr& c,
        KeyedSeq& s,
        size_t)
{
    c >> s.seq >> s.keyval >> s.baggage;
}

void cdr_write(
        eprosima::fastcdr::Cdr& c,
        const PerfComplex& s)
{
    c << s.seq << s.keyval << static_cast<uint32_t>(s.items.size());
    for (const PerfItem& it : s.items)
    {
        c << it.name << it.value << it.flags;
    }
}

void cdr_read(
        eprosima::fastcdr::Cdr& c,
        PerfComplex& s,
        size_t total)
{
    uint32_t n = 0;
    c >> s.seq >> s.keyval >> n;
    // Each item takes at least 16 octets: refuse counts the rest of the payload cannot hold
    // before resizing the vector.
    size_t used = c.getSerializedDataLength();
    if (used > total || static_cast<size_t>(n) > (total - used) / 16)
    {
        throw eprosima::fastcdr::exception::NotEnoughMemoryException("item count too large");
    }
    s.items.resize(n); // keeps capacity (and the strings' capacity) from earlier samples
    for (PerfItem& it : s.items)
    {
        c >> it.name >> it.value >> it.flags;
    }
}

const char* type_name(
        const KeyedSeq*)
{
    return "KeyedSeq";
}

const char* type_name(
        const PerfComplex*)
{
    return "PerfComplex";
}

template<typename T>
class PerfType : public TopicDataType
{
public:

    explicit PerfType(
            uint32_t expected_size)
    {
        setName(type_name(static_cast<const T*>(nullptr)));
        // Initial payload size of the history slots; larger samples reallocate
        // (PREALLOCATED_WITH_REALLOC_MEMORY_MODE, Fast DDS's default).
        m_typeSize = 4 + expected_size;
        m_isGetKeyDefined = true;
    }

    bool serialize(
            void* data,
            SerializedPayload_t* payload) override
    {
        eprosima::fastcdr::FastBuffer fb(reinterpret_cast<char*>(payload->data), payload->max_size);
        eprosima::fastcdr::Cdr ser(fb, eprosima::fastcdr::Cdr::LITTLE_ENDIANNESS,
                eprosima::fastcdr::Cdr::DDS_CDR);
        payload->encapsulation = CDR_LE;
        try
        {
            ser.serialize_encapsulation();
            cdr_write(ser, *static_cast<const T*>(data));
        }
        catch (eprosima::fastcdr::exception::Exception&)
        {
            return false;
        }
        payload->length = static_cast<uint32_t>(ser.getSerializedDataLength());
        return true;
    }

    bool deserialize(
            SerializedPayload_t* payload,
            void* data) override
    {
        eprosima::fastcdr::FastBuffer fb(reinterpret_cast<char*>(payload->data), payload->length);
        eprosima::fastcdr::Cdr deser(fb, eprosima::fastcdr::Cdr::DEFAULT_ENDIAN,
                eprosima::fastcdr::Cdr::DDS_CDR);
        try
        {
            deser.read_encapsulation();
            payload->encapsulation = deser.endianness() == eprosima::fastcdr::Cdr::BIG_ENDIANNESS ?
                    CDR_BE : CDR_LE;
            cdr_read(deser, *static_cast<T*>(data), payload->length);
        }
        catch (eprosima::fastcdr::exception::Exception&)
        {
            return false;
        }
        return true;
    }

    std::function<uint32_t()> getSerializedSizeProvider(
            void* data) override
    {
        return [data]() -> uint32_t
               {
                   return static_cast<uint32_t>(4 + cdr_size(*static_cast<const T*>(data)) + 8);
               };
    }

    void* createData() override
    {
        return new T();
    }

    void deleteData(
            void* data) override
    {
        delete static_cast<T*>(data);
    }

    // Key hash: the key fields in big-endian CDR, zero-padded to 16 octets (the key's maximum
    // size is 4 <= 16, so no MD5), as Cyclone DDS and the DDS-RTPS specification do.
    bool getKey(
            void* data,
            InstanceHandle_t* handle,
            bool force_md5 = false) override
    {
        uint32_t k = static_cast<const T*>(data)->keyval;
        uint8_t be[4] = {
            static_cast<uint8_t>(k >> 24), static_cast<uint8_t>(k >> 16),
            static_cast<uint8_t>(k >> 8), static_cast<uint8_t>(k)
        };
        if (force_md5)
        {
            ::MD5 md5;
            md5.init();
            md5.update(reinterpret_cast<const char*>(be), 4);
            md5.finalize();
            for (int i = 0; i < 16; ++i)
            {
                handle->value[i] = md5.digest[i];
            }
            return true;
        }
        for (int i = 0; i < 16; ++i)
        {
            handle->value[i] = i < 4 ? be[i] : 0;
        }
        return true;
    }

};

// The octets of baggage: `size` counts the whole payload, its 12 octets of sequence number,
// key and sequence length included (ddsperf's and tachyon perf's `size`).
size_t baggage_octets()
{
    return opt.size > 12 ? static_cast<size_t>(opt.size) - 12 : 0;
}

// The sample a ping or pub writes: `size` octets of payload, or items of a 12-character name,
// a value and flags (32 octets each in XCDR1) so that the serialized size is about `size`.
void fill_payload(
        KeyedSeq& s)
{
    s.baggage.assign(baggage_octets(), 0xee);
}

void fill_payload(
        PerfComplex& s)
{
    size_t n = baggage_octets() / 32;
    s.items.resize(n);
    for (size_t i = 0; i < n; ++i)
    {
        char name[16];
        std::snprintf(name, sizeof name, "item-%07u", static_cast<unsigned>(i % 10000000));
        s.items[i].name = name;
        s.items[i].value = static_cast<int64_t>(i) * 1000003;
        s.items[i].flags = static_cast<uint32_t>(i);
    }
}

size_t expected_cdr_size()
{
    if (opt.complex)
    {
        PerfComplex s;
        fill_payload(s);
        return cdr_size(s);
    }
    return 12 + baggage_octets();
}

// ---------------------------------------------------------------------------------------------
// Entities

struct Entities
{
    DomainParticipant* dp = nullptr;
    Publisher* pub = nullptr;
    Subscriber* sub = nullptr;
    int64_t t_created = 0;
};

[[noreturn]] void fail(
        const char* what)
{
    std::fprintf(stderr, "fastdds_perf: %s\n", what);
    std::exit(1);
}

std::string topic_name(
        const char* role)
{
    std::string t = opt.complex ? "TachyonPerf" : "DDSPerf";
    t += opt.reliable ? "R" : "U";
    t += role;
    t += opt.complex ? "CX" : "KS";
    return t;
}

// The QoS writers and readers share. Ping and pong are KEEP_LAST(1) whatever --history says
// (ddsperf's choice); pub/sub data follow the options.
template<typename Q>
void endpoint_qos(
        Q& q,
        bool data)
{
    q.reliability().kind = opt.reliable ? RELIABLE_RELIABILITY_QOS : BEST_EFFORT_RELIABILITY_QOS;
    q.reliability().max_blocking_time = FDuration(1, 0);
    // Set both explicitly: a DataWriter defaults to TRANSIENT_LOCAL, a DataReader to BEST_EFFORT.
    q.durability().kind = opt.transient_local ? TRANSIENT_LOCAL_DURABILITY_QOS : VOLATILE_DURABILITY_QOS;
    int32_t keys = static_cast<int32_t>(opt.keys);
    if (data && opt.keep_all)
    {
        q.history().kind = KEEP_ALL_HISTORY_QOS;
        q.resource_limits().max_samples = 10000;
        q.resource_limits().max_instances = keys;
        q.resource_limits().max_samples_per_instance = std::max<int32_t>(1, 10000 / keys);
    }
    else
    {
        int32_t depth = data ? static_cast<int32_t>(opt.depth) : 1;
        q.history().kind = KEEP_LAST_HISTORY_QOS;
        q.history().depth = depth;
        q.resource_limits().max_instances = keys;
        q.resource_limits().max_samples_per_instance = depth;
        // Not keys * depth: a reliable reader whose max_samples is 1 starves under a fast writer
        // (measured: no sample delivered at all at 100k samples/s). Fast DDS's default is 5000.
        q.resource_limits().max_samples = std::max(keys * depth, 5000);
    }
    q.resource_limits().allocated_samples = std::min<int32_t>(100, q.resource_limits().max_samples);
    q.data_sharing().off();
}

Entities make_participant()
{
    Entities e;
    DomainParticipantQos pqos = PARTICIPANT_QOS_DEFAULT;
    pqos.name(std::string("fastdds_perf ") + opt.mode_name);
    // UDPv4 only: the builtin shared-memory transport would carry same-host traffic otherwise
    // (and leave segments in /dev/shm behind killed processes). With --transport shm, the
    // builtin transports (shared memory and UDPv4) are kept, as Fast DDS runs by default.
    pqos.transport().use_builtin_transports = opt.shm;
    // 4 MiB socket buffers, as Tachyon asks for by default (Cyclone DDS asks for at least
    // 1 MiB): with the kernel's 208 KiB, reliable keep-all throughput collapses to a few
    // thousand samples/s from losses and repairs, which says nothing about Fast DDS itself.
    auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
    udp->receiveBufferSize = 4u << 20;
    udp->sendBufferSize = 4u << 20;
    if (!opt.shm)
    {
        pqos.transport().user_transports.push_back(udp);
    }
    e.t_created = now_ns();
    e.dp = DomainParticipantFactory::get_instance()->create_participant(
        static_cast<DomainId_t>(opt.domain), pqos);
    if (e.dp == nullptr)
    {
        fail("cannot create the domain participant");
    }
    e.pub = e.dp->create_publisher(PUBLISHER_QOS_DEFAULT);
    e.sub = e.dp->create_subscriber(SUBSCRIBER_QOS_DEFAULT);
    if (e.pub == nullptr || e.sub == nullptr)
    {
        fail("cannot create the publisher or subscriber");
    }
    TypeSupport type(opt.complex ?
            static_cast<TopicDataType*>(new PerfType<PerfComplex>(static_cast<uint32_t>(expected_cdr_size()))) :
            static_cast<TopicDataType*>(new PerfType<KeyedSeq>(static_cast<uint32_t>(expected_cdr_size()))));
    if (type.register_type(e.dp) != ReturnCode_t::RETCODE_OK)
    {
        fail("cannot register the type");
    }
    return e;
}

Topic* make_topic(
        Entities& e,
        const char* role)
{
    std::string name = topic_name(role);
    Topic* t = e.dp->create_topic(name, opt.complex ? "PerfComplex" : "KeyedSeq", TOPIC_QOS_DEFAULT);
    if (t == nullptr)
    {
        fail("cannot create a topic");
    }
    return t;
}

DataWriter* make_writer(
        Entities& e,
        Topic* t,
        bool data)
{
    DataWriterQos q = DATAWRITER_QOS_DEFAULT;
    endpoint_qos(q, data);
    if (expected_cdr_size() + 4 > 64000)
    {
        // Fragmented samples: let Fast DDS's sending thread pace the fragments.
        q.publish_mode().kind = ASYNCHRONOUS_PUBLISH_MODE;
    }
    DataWriter* w = e.pub->create_datawriter(t, q);
    if (w == nullptr)
    {
        fail("cannot create a data writer (QoS refused?)");
    }
    return w;
}

DataReader* make_reader(
        Entities& e,
        Topic* t,
        bool data,
        DataReaderListener* listener)
{
    DataReaderQos q = DATAREADER_QOS_DEFAULT;
    endpoint_qos(q, data);
    DataReader* r = e.sub->create_datareader(t, q, listener,
                    listener != nullptr ? StatusMask::data_available() : StatusMask::none());
    if (r == nullptr)
    {
        fail("cannot create a data reader (QoS refused?)");
    }
    return r;
}

void teardown(
        Entities& e)
{
    e.dp->delete_contained_entities();
    DomainParticipantFactory::get_instance()->delete_participant(e.dp);
}

// A WaitSet on a ReadCondition (any not-yet-read sample), with a guard condition to wake it.
struct Waiter
{
    DataReader* reader = nullptr;
    ReadCondition* cond = nullptr;
    GuardCondition guard;
    WaitSet ws;

    explicit Waiter(
            DataReader* r)
        : reader(r)
    {
        cond = r->create_readcondition(NOT_READ_SAMPLE_STATE, ANY_VIEW_STATE, ANY_INSTANCE_STATE);
        if (cond == nullptr)
        {
            fail("cannot create a ReadCondition");
        }
        ws.attach_condition(*cond);
        ws.attach_condition(guard);
    }

    // Waits up to `ns` for data; true when woken by data (or the guard).
    bool wait(
            int64_t ns)
    {
        ConditionSeq active;
        return ws.wait(active, to_duration(ns)) == ReturnCode_t::RETCODE_OK;
    }

    void wake()
    {
        guard.set_trigger_value(true);
    }

    ~Waiter()
    {
        ws.detach_condition(guard);
        ws.detach_condition(*cond);
        reader->delete_readcondition(cond);
    }

};

// Stops an application thread that takes (waiting on `waiter`, or polling) and joins it.
void stop_worker(
        std::atomic<bool>& quit,
        std::unique_ptr<Waiter>& waiter,
        std::thread& worker)
{
    quit.store(true);
    if (waiter)
    {
        waiter->wake();
    }
    if (worker.joinable())
    {
        worker.join();
    }
    waiter.reset();
}

// Waits until `w` has matched `n` readers and `r` (if any) `n` writers; the time it happened.
int64_t wait_matched(
        DataWriter* w,
        DataReader* r,
        long n)
{
    int64_t give_up = now_ns() + 10 * NS;
    for (;;)
    {
        int32_t wm = INT32_MAX, rm = INT32_MAX;
        if (w != nullptr)
        {
            PublicationMatchedStatus s;
            w->get_publication_matched_status(s);
            wm = s.current_count;
        }
        if (r != nullptr)
        {
            SubscriptionMatchedStatus s;
            r->get_subscription_matched_status(s);
            rm = s.current_count;
        }
        int64_t t = now_ns();
        if (wm >= n && rm >= n)
        {
            return t;
        }
        if (g_stop.load())
        {
            std::exit(1);
        }
        if (t > give_up)
        {
            std::fprintf(stderr,
                    "fastdds_perf: %s: waited 10 s for %ld subscriber(s) and found %d matched reader(s)",
                    opt.mode_name, n, wm == INT32_MAX ? 0 : wm);
            if (r != nullptr)
            {
                std::fprintf(stderr, ", %d matched pong writer(s)", rm);
            }
            std::fprintf(stderr, " on domain %d (topic %s); giving up\n", opt.domain,
                    topic_name(opt.mode == Mode::Ping || opt.mode == Mode::Intra ? "Ping" : "Data").c_str());
            std::exit(1);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

// ---------------------------------------------------------------------------------------------
// JSON output

struct TimelineEntry
{
    double t = 0.0;
    uint64_t count = 0;
    bool latency = false;
    uint64_t p50 = 0;
    uint64_t max = 0;
    double samples_per_s = 0.0;
    double mbit_per_s = 0.0;
};

struct Result
{
    const char* role = "ping";
    bool has_latency = false;
    const Histogram* hist = nullptr;
    const RunningStats* stats = nullptr;
    uint64_t lat_lost = 0;
    bool has_throughput = false;
    uint64_t samples = 0;
    bool has_tp_lost = true;
    uint64_t tp_lost = 0;
    uint64_t bytes = 0;
    double seconds = 0.0;
    std::vector<TimelineEntry> timeline;
    CpuMark cpu0, cpu1;
    bool has_discovery = false;
    int64_t discovery_ns = 0;
};

std::string jnum(
        double v,
        const char* fmt = "%.3f")
{
    char b[64];
    std::snprintf(b, sizeof b, fmt, v);
    return b;
}

std::string jint(
        uint64_t v)
{
    return std::to_string(v);
}

void write_json(
        const Result& r)
{
    if (opt.json == nullptr)
    {
        return;
    }
    std::string s;
    s.reserve(1 << 16);
    s += "{\n  \"schema\": \"tachyon-perf/1\",\n  \"implementation\": \"fastdds\",\n";
    s += "  \"version\": \"" FASTRTPS_VERSION_STR "\",\n";
    s += std::string("  \"role\": \"") + r.role + "\",\n";
    s += "  \"config\": {";
    s += "\"size\": " + std::to_string(opt.size);
    s += ", \"payload_bytes\": " + std::to_string(expected_cdr_size());
    s += std::string(", \"type\": \"") + (opt.complex ? "complex" : "simple") + "\"";
    s += std::string(", \"reliability\": \"") + (opt.reliable ? "reliable" : "best-effort") + "\"";
    bool data = opt.mode == Mode::Pub || opt.mode == Mode::Sub;
    bool keep_all = data && opt.keep_all;
    s += std::string(", \"history\": \"") + (keep_all ? "keep-all" : "keep-last") + "\"";
    s += ", \"depth\": " + (keep_all ? std::string("null") : std::to_string(data ? opt.depth : 1));
    s += std::string(", \"durability\": \"") + (opt.transient_local ? "transient-local" : "volatile") + "\"";
    s += ", \"keys\": " + std::to_string(opt.keys);
    s += ", \"rate\": " + (opt.rate > 0 ? jnum(opt.rate, "%.6g") : std::string("null"));
    s += ", \"burst\": " + std::to_string(opt.burst);
    s += std::string(", \"delivery\": \"") + (opt.poll ? "poll" : opt.waitset ? "waitset" : "listener") + "\"";
    s += std::string(", \"transport\": \"") + (opt.shm ? "shm" : "udp") + "\"";
    // Fast DDS sends user data unicast to each reader's locators; only discovery uses multicast.
    s += ", \"multicast\": false";
    s += ", \"subscribers\": " + std::to_string(opt.subscribers);
    s += ", \"warmup_s\": " + jnum(opt.warmup);
    s += ", \"duration_s\": " + jnum(opt.duration);
    s += "},\n";
    if (r.has_latency)
    {
        const Histogram& h = *r.hist;
        const RunningStats& st = *r.stats;
        s += "  \"latency\": {\"count\": " + jint(h.count()) + ", \"lost\": " + jint(r.lat_lost);
        s += ", \"min\": " + jint(h.min());
        s += ", \"mean\": " + jint(static_cast<uint64_t>(std::llround(st.mean)));
        s += ", \"p50\": " + jint(h.quantile(0.50));
        s += ", \"p90\": " + jint(h.quantile(0.90));
        s += ", \"p99\": " + jint(h.quantile(0.99));
        s += ", \"p99_9\": " + jint(h.quantile(0.999));
        s += ", \"p99_99\": " + jint(h.quantile(0.9999));
        s += ", \"max\": " + jint(h.max());
        s += ", \"stddev\": " + jint(static_cast<uint64_t>(std::llround(st.stddev())));
        s += ", \"pdv\": " + jint(static_cast<uint64_t>(std::llround(st.pdv())));
        s += "},\n  \"histogram\": [";
        bool first = true;
        for (int i = 0; i < Histogram::NBUCKETS; ++i)
        {
            uint64_t c = h.buckets()[static_cast<size_t>(i)];
            if (c != 0)
            {
                s += first ? "" : ", ";
                s += "[" + jint(Histogram::upper(i)) + ", " + jint(c) + "]";
                first = false;
            }
        }
        s += "],\n";
    }
    else
    {
        s += "  \"latency\": null,\n  \"histogram\": null,\n";
    }
    if (r.has_throughput)
    {
        double sec = r.seconds > 0 ? r.seconds : 1e-9;
        s += "  \"throughput\": {\"samples\": " + jint(r.samples);
        s += ", \"lost\": " + (r.has_tp_lost ? jint(r.tp_lost) : std::string("null"));
        s += ", \"bytes\": " + jint(r.bytes);
        s += ", \"seconds\": " + jnum(r.seconds, "%.6f");
        s += ", \"samples_per_s\": " + jnum(static_cast<double>(r.samples) / sec, "%.1f");
        s += ", \"mbit_per_s\": " + jnum(static_cast<double>(r.bytes) * 8.0 / sec / 1e6, "%.3f");
        s += "},\n";
    }
    else
    {
        s += "  \"throughput\": null,\n";
    }
    s += "  \"timeline\": [";
    for (size_t i = 0; i < r.timeline.size(); ++i)
    {
        const TimelineEntry& e = r.timeline[i];
        s += i == 0 ? "\n    " : ",\n    ";
        s += "{\"t\": " + jnum(e.t) + ", \"count\": " + jint(e.count);
        if (e.latency)
        {
            s += ", \"p50\": " + jint(e.p50) + ", \"max\": " + jint(e.max);
            s += ", \"samples_per_s\": null, \"mbit_per_s\": null}";
        }
        else
        {
            s += ", \"p50\": null, \"max\": null";
            s += ", \"samples_per_s\": " + jnum(e.samples_per_s, "%.1f");
            s += ", \"mbit_per_s\": " + jnum(e.mbit_per_s, "%.3f") + "}";
        }
    }
    s += r.timeline.empty() ? "],\n" : "\n  ],\n";
    double user = r.cpu1.user - r.cpu0.user;
    double sys = r.cpu1.sys - r.cpu0.sys;
    double wall = static_cast<double>(r.cpu1.wall - r.cpu0.wall) / 1e9;
    s += "  \"process\": {\"cpu_user_s\": " + jnum(user) + ", \"cpu_sys_s\": " + jnum(sys);
    s += ", \"cpu_percent\": " + jnum(wall > 0 ? (user + sys) / wall * 100.0 : 0.0, "%.1f");
    s += ", \"peak_rss_kib\": " + std::to_string(r.cpu1.maxrss_kib) + "},\n";
    s += "  \"discovery_ns\": " + (r.has_discovery ? std::to_string(r.discovery_ns) : std::string("null"));
    s += "\n}\n";

    if (std::strcmp(opt.json, "-") == 0)
    {
        std::fwrite(s.data(), 1, s.size(), stdout);
        std::fflush(stdout);
        return;
    }
    FILE* f = std::fopen(opt.json, "w");
    if (f == nullptr || std::fwrite(s.data(), 1, s.size(), f) != s.size() || std::fclose(f) != 0)
    {
        std::fprintf(stderr, "fastdds_perf: cannot write %s: %s\n", opt.json, std::strerror(errno));
        std::exit(1);
    }
}

// ---------------------------------------------------------------------------------------------
// ping

constexpr int64_t PONG_TIMEOUT = NS;

template<typename T>
class Ping : public DataReaderListener
{
public:

    DataWriter* writer = nullptr;
    DataReader* reader = nullptr;

    std::mutex m;
    std::condition_variable cv;
    T sample;          // the next ping (under m)
    T out;             // the ping being written (under write_m)
    std::mutex write_m;
    bool pending = false; // sample waits to be written (under m)
    T rx;              // the pong being taken (receiving thread only)
    uint32_t seq = 0;
    int64_t t_sent = 0;
    long pongs = 0;
    bool outstanding = false;
    int64_t next_due = 0;
    int64_t period = 0; // 0 = unlimited rate
    int64_t measure_start = INT64_MAX;
    int64_t measure_end = INT64_MAX;
    bool done = false;
    int64_t t_done = 0;
    Histogram total, interval;
    RunningStats stats;
    uint64_t lost = 0;
    uint64_t timeouts = 0;

    // Makes the next ping (m held); write_pending() writes it once m is released: in one
    // process (intra) Fast DDS delivers on the writing thread, the pong's answer included, and
    // the pong's arrival takes m. The clock is read here, before the write.
    void send_locked()
    {
        ++seq;
        sample.seq = seq;
        sample.keyval = seq % static_cast<uint32_t>(opt.keys);
        pongs = 0;
        outstanding = true;
        pending = true;
        t_sent = now_ns();
    }

    // Writes the ping send_locked() made, if any (m not held; one writer at a time).
    void write_pending()
    {
        std::lock_guard<std::mutex> w(write_m);
        {
            std::lock_guard<std::mutex> g(m);
            if (!pending)
            {
                return;
            }
            pending = false;
            out = sample;
        }
        if (!writer->write(&out))
        {
            std::fprintf(stderr, "fastdds_perf: ping: write of ping %u failed\n", out.seq);
        }
    }

    void on_pong(
            const T& s,
            int64_t t_rx)
    {
        std::lock_guard<std::mutex> g(m);
        if (!outstanding || s.seq != seq || done)
        {
            return; // stale (answer to a ping given up on) or after the end
        }
        ++pongs;
        int64_t rtt = t_rx - t_sent;
        if (t_sent >= measure_start)
        {
            if (t_rx >= measure_end)
            {
                finish_locked(measure_end);
                return;
            }
            total.add(static_cast<uint64_t>(rtt));
            interval.add(static_cast<uint64_t>(rtt));
            stats.add(rtt);
            if (opt.count > 0 && total.count() >= static_cast<uint64_t>(opt.count))
            {
                finish_locked(t_rx);
                return;
            }
        }
        if (pongs >= opt.subscribers)
        {
            outstanding = false;
            if (period == 0)
            {
                send_locked();
            }
            else
            {
                cv.notify_all();
            }
        }
    }

    void finish_locked(
            int64_t t)
    {
        if (!done)
        {
            done = true;
            t_done = t;
            cv.notify_all();
        }
    }

    // Timeouts and scheduled sends (m held); returns when it next needs to run.
    int64_t step_locked()
    {
        int64_t now = now_ns();
        if (done)
        {
            return now + NS;
        }
        if (now >= measure_end)
        {
            finish_locked(measure_end);
            return now + NS;
        }
        if (outstanding && now - t_sent >= PONG_TIMEOUT)
        {
            long missing = opt.subscribers - pongs;
            ++timeouts;
            if (t_sent >= measure_start)
            {
                lost += static_cast<uint64_t>(missing);
            }
            std::fprintf(stderr, "fastdds_perf: ping %u: %ld pong(s) missing after 1 s%s; sending the next\n",
                    seq, missing, t_sent >= measure_start ? " (counted lost)" : " (warm-up)");
            outstanding = false;
        }
        if (!outstanding)
        {
            if (period == 0)
            {
                send_locked();
            }
            else if (now >= next_due)
            {
                next_due += period;
                if (next_due < now)
                {
                    next_due = now; // fell behind (a timeout): do not burst to catch up
                }
                send_locked();
            }
            else
            {
                return next_due;
            }
        }
        return t_sent + PONG_TIMEOUT;
    }

    void take_all()
    {
        SampleInfo info;
        while (reader->take_next_sample(&rx, &info) == ReturnCode_t::RETCODE_OK)
        {
            int64_t t = now_ns();
            if (info.valid_data)
            {
                on_pong(rx, t);
            }
        }
    }

    void on_data_available(
            DataReader*) override
    {
        take_all();
        // In one process the next ping would be delivered, and answered, inside this call:
        // the driver thread writes it instead.
        if (opt.mode != Mode::Intra)
        {
            write_pending();
        }
        else
        {
            cv.notify_all();
        }
    }

    // Listener mode: pings go out from the listener; this thread handles timeouts and the rate.
    void driver()
    {
        std::unique_lock<std::mutex> g(m);
        while (!done && !g_stop.load())
        {
            int64_t wake = std::min(step_locked(), now_ns() + 100000000);
            if (pending)
            {
                g.unlock();
                write_pending();
                g.lock();
                continue;
            }
            cv.wait_for(g, std::chrono::nanoseconds(std::max<int64_t>(0, wake - now_ns())));
        }
    }

    // WaitSet mode: one application thread waits, takes, answers and keeps the schedule.
    void waitset_loop(
            Waiter& w)
    {
        while (!g_stop.load())
        {
            int64_t wake;
            {
                std::lock_guard<std::mutex> g(m);
                if (done)
                {
                    break;
                }
                wake = step_locked();
            }
            write_pending();
            int64_t d = std::min<int64_t>(wake - now_ns(), 100000000);
            if (d > 0)
            {
                w.wait(d);
            }
            take_all();
            write_pending();
        }
    }

    // Poll mode: one application thread takes in a loop, never sleeping, and keeps the
    // schedule.
    void poll_loop()
    {
        while (!g_stop.load())
        {
            int64_t wake;
            {
                std::lock_guard<std::mutex> g(m);
                if (done)
                {
                    break;
                }
                wake = std::min<int64_t>(step_locked(), now_ns() + 100000000);
            }
            write_pending();
            while (now_ns() < wake && !done_relaxed())
            {
                take_all();
                write_pending();
            }
        }
    }

    bool done_relaxed()
    {
        std::lock_guard<std::mutex> g(m);
        return done;
    }

};

template<typename T>
class Pong;

template<typename T>
int run_ping()
{
    // intra: the pong side in this process too, as a participant of its own.
    std::unique_ptr<Pong<T>> pong;
    if (opt.mode == Mode::Intra)
    {
        pong.reset(new Pong<T>());
        pong->start();
    }
    Entities e = make_participant();
    Topic* tping = make_topic(e, "Ping");
    Topic* tpong = make_topic(e, "Pong");
    static Ping<T> p; // outlives the reader it listens to
    fill_payload(p.sample);
    p.period = opt.rate > 0 ? static_cast<int64_t>(1e9 / opt.rate) : 0;
    p.writer = make_writer(e, tping, false);
    p.reader = make_reader(e, tpong, false, app_thread() ? nullptr : &p);
    int64_t t_matched = wait_matched(p.writer, p.reader, opt.subscribers);

    int64_t start = now_ns();
    bool by_duration = opt.count == 0 || opt.duration_given;
    {
        std::lock_guard<std::mutex> g(p.m);
        p.measure_start = start + secs_to_ns(opt.warmup);
        p.measure_end = by_duration ? p.measure_start + secs_to_ns(opt.duration) : INT64_MAX;
        p.next_due = start;
    }
    std::unique_ptr<Waiter> waiter;
    std::thread worker;
    if (opt.waitset)
    {
        waiter.reset(new Waiter(p.reader));
        worker = std::thread([&]()
                        {
                            p.waitset_loop(*waiter);
                        });
    }
    else if (opt.poll)
    {
        worker = std::thread([&]()
                        {
                            p.poll_loop();
                        });
    }
    else
    {
        worker = std::thread([&]()
                        {
                            p.driver();
                        });
    }

    Result r;
    r.role = opt.mode_name;
    sleep_until_ns(p.measure_start);
    r.cpu0 = cpu_mark();
    int64_t t0 = p.measure_start;
    int64_t next = t0 + NS;
    int64_t last_tick = t0;
    auto tick = [&](int64_t t)
            {
                TimelineEntry te;
                {
                    std::lock_guard<std::mutex> g(p.m);
                    te.count = p.interval.count();
                    te.p50 = p.interval.quantile(0.5);
                    te.max = p.interval.max();
                    p.interval.reset();
                }
                te.latency = true;
                te.t = static_cast<double>(t - t0) / 1e9;
                r.timeline.push_back(te);
                if (!opt.quiet)
                {
                    std::fprintf(stderr, "t=%.1f count=%" PRIu64 " p50=%.1fus max=%.1fus\n", te.t, te.count,
                            static_cast<double>(te.p50) / 1e3, static_cast<double>(te.max) / 1e3);
                }
                last_tick = t;
            };
    for (;;)
    {
        std::unique_lock<std::mutex> g(p.m);
        int64_t now = now_ns();
        if (p.done || g_stop.load())
        {
            break;
        }
        if (now >= p.measure_end)
        {
            p.finish_locked(p.measure_end);
            break;
        }
        if (now >= next)
        {
            g.unlock();
            tick(next);
            next += NS;
            continue;
        }
        int64_t wake = std::min({next, p.measure_end, now + 50000000});
        p.cv.wait_for(g, std::chrono::nanoseconds(wake - now));
    }
    int64_t t_end;
    {
        std::lock_guard<std::mutex> g(p.m);
        if (!p.done)
        {
            p.finish_locked(now_ns()); // interrupted
        }
        t_end = p.t_done;
    }
    r.cpu1 = cpu_mark();
    if (t_end - last_tick > NS / 10 || (t_end > last_tick && p.interval.count() > 0))
    {
        tick(t_end);
    }
    if (waiter)
    {
        waiter->wake();
    }
    p.cv.notify_all();
    worker.join();
    waiter.reset();

    r.has_latency = true;
    r.hist = &p.total;
    r.stats = &p.stats;
    r.lat_lost = p.lost;
    r.has_discovery = true;
    r.discovery_ns = t_matched - e.t_created;
    if (!opt.quiet)
    {
        std::fprintf(stderr,
                "fastdds_perf ping: %" PRIu64 " round trips, p50 %.1f us, p99 %.1f us, max %.1f us, lost %" PRIu64
                ", discovery %.1f ms\n",
                p.total.count(), static_cast<double>(p.total.quantile(0.5)) / 1e3,
                static_cast<double>(p.total.quantile(0.99)) / 1e3, static_cast<double>(p.total.max()) / 1e3,
                p.lost, static_cast<double>(r.discovery_ns) / 1e6);
    }
    write_json(r);
    int rc = 0;
    if (p.total.count() == 0)
    {
        std::fprintf(stderr, "fastdds_perf: ping: no round trip measured\n");
        rc = 1;
    }
    teardown(e);
    if (pong)
    {
        pong->stop();
    }
    return rc;
}

// ---------------------------------------------------------------------------------------------
// pong

template<typename T>
class Pong : public DataReaderListener
{
public:

    Entities e;
    DataReader* reader = nullptr;
    DataWriter* writer = nullptr;
    std::mutex m;
    T s;
    std::atomic<bool> quit{false};
    std::unique_ptr<Waiter> waiter;
    std::thread worker;

    void answer_all()
    {
        std::lock_guard<std::mutex> g(m);
        SampleInfo info;
        while (reader->take_next_sample(&s, &info) == ReturnCode_t::RETCODE_OK)
        {
            if (info.valid_data && !writer->write(&s))
            {
                std::fprintf(stderr, "fastdds_perf: pong: write of pong %u failed\n", s.seq);
            }
        }
    }

    void on_data_available(
            DataReader*) override
    {
        answer_all();
    }

    // Creates the participant and its endpoints, and answers: from the listener, or from a
    // thread waiting on a WaitSet or polling.
    void start()
    {
        e = make_participant();
        Topic* tping = make_topic(e, "Ping");
        Topic* tpong = make_topic(e, "Pong");
        writer = make_writer(e, tpong, false);
        reader = make_reader(e, tping, false, app_thread() ? nullptr : this);
        if (opt.waitset)
        {
            waiter.reset(new Waiter(reader));
            worker = std::thread([this]()
                            {
                                while (!quit.load() && !g_stop.load())
                                {
                                    waiter->wait(100000000);
                                    answer_all();
                                }
                            });
        }
        else if (opt.poll)
        {
            worker = std::thread([this]()
                            {
                                while (!quit.load(std::memory_order_relaxed) && !g_stop.load())
                                {
                                    answer_all();
                                }
                            });
        }
    }

    // Stops answering, then deletes the entities.
    void stop()
    {
        stop_worker(quit, waiter, worker);
        reader->set_listener(nullptr);
        teardown(e);
    }

};

template<typename T>
int run_pong()
{
    static Pong<T> p;
    p.start();
    int64_t deadline = now_ns() + secs_to_ns(opt.warmup + opt.duration + 10.0);
    while (!g_stop.load() && now_ns() < deadline)
    {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    p.stop();
    return 0;
}

// ---------------------------------------------------------------------------------------------
// sub

struct WriterSeq
{
    InstanceHandle_t writer;
    std::vector<uint32_t> expected; // next seq expected, per keyval
};

template<typename T>
class Sub : public DataReaderListener
{
public:

    DataReader* reader = nullptr;
    std::mutex m;
    T s;
    std::vector<WriterSeq> writers;
    std::atomic<uint64_t> samples{0};
    std::atomic<uint64_t> bytes{0};
    std::atomic<uint64_t> lost{0};
    std::atomic<int64_t> first{0};

    // Loss from sequence gaps per writer and key: the publisher numbers samples 0,1,2,... and
    // cycles keyval, so each key of a writer expects seq + keys next (ddsperf's rule).
    void check_seq(
            const InstanceHandle_t& w,
            uint32_t seq,
            uint32_t key)
    {
        uint32_t nkeys = static_cast<uint32_t>(opt.keys);
        WriterSeq* ws = nullptr;
        for (WriterSeq& x : writers)
        {
            if (x.writer == w)
            {
                ws = &x;
                break;
            }
        }
        if (ws == nullptr)
        {
            writers.push_back(WriterSeq{w, std::vector<uint32_t>(std::max(nkeys, key + 1))});
            ws = &writers.back();
            for (uint32_t i = 0; i < ws->expected.size(); ++i)
            {
                ws->expected[i] = seq + (i - key) + (i <= key ? nkeys : 0);
            }
            return;
        }
        if (key >= ws->expected.size())
        {
            ws->expected.resize(key + 1, seq);
        }
        uint32_t e = ws->expected[key];
        if (static_cast<int32_t>(seq - e) > 0)
        {
            lost.fetch_add(seq - e, std::memory_order_relaxed);
        }
        ws->expected[key] = seq + nkeys;
    }

    void take_all()
    {
        std::lock_guard<std::mutex> g(m);
        SampleInfo info;
        while (reader->take_next_sample(&s, &info) == ReturnCode_t::RETCODE_OK)
        {
            if (!info.valid_data)
            {
                continue;
            }
            if (first.load(std::memory_order_relaxed) == 0)
            {
                first.store(now_ns());
            }
            check_seq(info.publication_handle, s.seq, s.keyval);
            bytes.fetch_add(cdr_size(s), std::memory_order_relaxed);
            samples.fetch_add(1, std::memory_order_relaxed);
        }
    }

    void on_data_available(
            DataReader*) override
    {
        take_all();
    }

};

template<typename T>
int run_sub()
{
    Entities e = make_participant();
    Topic* tdata = make_topic(e, "Data");
    static Sub<T> p;
    p.reader = make_reader(e, tdata, true, app_thread() ? nullptr : &p);
    int64_t deadline = now_ns() + secs_to_ns(opt.warmup + opt.duration + 10.0);
    std::atomic<bool> quit{false};
    std::unique_ptr<Waiter> waiter;
    std::thread worker;
    if (opt.waitset)
    {
        waiter.reset(new Waiter(p.reader));
        worker = std::thread([&]()
                        {
                            while (!quit.load())
                            {
                                waiter->wait(100000000);
                                p.take_all();
                            }
                        });
    }
    else if (opt.poll)
    {
        worker = std::thread([&]()
                        {
                            while (!quit.load(std::memory_order_relaxed))
                            {
                                p.take_all();
                            }
                        });
    }

    Result r;
    r.role = "sub";
    r.has_throughput = true;
    // Discovery: until the reader matched a writer. The measured part starts `warmup` after the
    // first sample and lasts `duration`.
    int64_t t_matched = 0;
    while (!g_stop.load() && now_ns() < deadline)
    {
        if (t_matched == 0)
        {
            SubscriptionMatchedStatus st;
            p.reader->get_subscription_matched_status(st);
            if (st.current_count > 0)
            {
                t_matched = now_ns();
            }
        }
        if (p.first.load() != 0)
        {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (t_matched == 0 && p.first.load() != 0)
    {
        t_matched = p.first.load(); // matched within the last poll interval, before the first sample
    }
    if (t_matched != 0)
    {
        r.has_discovery = true;
        r.discovery_ns = t_matched - e.t_created;
    }
    int64_t first = p.first.load();
    if (first == 0)
    {
        std::fprintf(stderr, "fastdds_perf: sub: no data received on %s\n", topic_name("Data").c_str());
        stop_worker(quit, waiter, worker);
        p.reader->set_listener(nullptr);
        teardown(e);
        return 1;
    }
    int64_t t0 = first + secs_to_ns(opt.warmup);
    int64_t t_end_plan = t0 + secs_to_ns(opt.duration);
    sleep_until_ns(t0);
    r.cpu0 = cpu_mark();
    uint64_t s0 = p.samples.load(), b0 = p.bytes.load(), l0 = p.lost.load();
    uint64_t sp = s0, bp = b0, lp = l0;
    int64_t tp = t0;
    auto tick = [&](int64_t t)
            {
                uint64_t sn = p.samples.load(), bn = p.bytes.load(), ln = p.lost.load();
                double dt = static_cast<double>(t - tp) / 1e9;
                TimelineEntry te;
                te.t = static_cast<double>(t - t0) / 1e9;
                te.count = sn - sp;
                te.samples_per_s = dt > 0 ? static_cast<double>(sn - sp) / dt : 0.0;
                te.mbit_per_s = dt > 0 ? static_cast<double>(bn - bp) * 8.0 / dt / 1e6 : 0.0;
                r.timeline.push_back(te);
                if (!opt.quiet)
                {
                    std::fprintf(stderr, "t=%.1f samples/s=%.0f Mbit/s=%.2f lost=%" PRIu64 "\n", te.t,
                            te.samples_per_s, te.mbit_per_s, ln - lp);
                }
                sp = sn;
                bp = bn;
                lp = ln;
                tp = t;
            };
    int64_t next = t0 + NS;
    int64_t t_end = t_end_plan;
    for (;;)
    {
        int64_t now = now_ns();
        if (g_stop.load() || now >= deadline)
        {
            t_end = std::min(now, t_end_plan);
            break;
        }
        if (now >= t_end_plan)
        {
            break;
        }
        if (now >= next && next <= t_end_plan)
        {
            tick(next);
            next += NS;
            continue;
        }
        sleep_until_ns(std::min({next, t_end_plan, deadline}));
    }
    uint64_t s1 = p.samples.load(), b1 = p.bytes.load(), l1 = p.lost.load();
    r.cpu1 = cpu_mark();
    if (t_end - tp > NS / 10)
    {
        tick(t_end);
    }

    r.samples = s1 - s0;
    r.bytes = b1 - b0;
    r.tp_lost = l1 - l0;
    r.seconds = static_cast<double>(t_end - t0) / 1e9;
    if (!opt.quiet)
    {
        double sec = r.seconds > 0 ? r.seconds : 1e-9;
        std::fprintf(stderr,
                "fastdds_perf sub: %" PRIu64 " samples in %.2f s: %.0f samples/s, %.2f Mbit/s, lost %" PRIu64 "\n",
                r.samples, r.seconds, static_cast<double>(r.samples) / sec,
                static_cast<double>(r.bytes) * 8.0 / sec / 1e6, r.tp_lost);
    }
    write_json(r);

    // Keep taking (uncounted) until the publisher has gone, a signal, or the deadline: Fast DDS
    // 2.9.1 can deadlock a reliable writer that is blocked in write() when a matched reader goes
    // away under it (the flow controller and matched_reader_remove take two locks in opposite
    // orders; fixed upstream later), so the subscriber does not leave while the publisher writes.
    while (!g_stop.load() && now_ns() < deadline)
    {
        SubscriptionMatchedStatus st;
        p.reader->get_subscription_matched_status(st);
        if (st.current_count == 0)
        {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    stop_worker(quit, waiter, worker);
    p.reader->set_listener(nullptr);
    teardown(e);
    return 0;
}

// ---------------------------------------------------------------------------------------------
// pub

template<typename T>
int run_pub()
{
    Entities e = make_participant();
    Topic* tdata = make_topic(e, "Data");
    DataWriter* w = make_writer(e, tdata, true);
    int64_t t_matched = wait_matched(w, nullptr, opt.subscribers);
    T s;
    fill_payload(s);
    uint64_t payload = cdr_size(s);

    Result r;
    r.role = "pub";
    r.has_throughput = true;
    r.has_tp_lost = false;
    r.has_discovery = opt.subscribers > 0;
    r.discovery_ns = t_matched - e.t_created;

    int64_t start = now_ns();
    int64_t t0 = start + secs_to_ns(opt.warmup);
    int64_t t_end = t0 + secs_to_ns(opt.duration);
    // Keep publishing a second past the measured part so that subscribers, whose measured part
    // starts at their first sample, see a full one.
    int64_t t_stop = t_end + NS;
    uint64_t written = 0, s0 = 0, s1 = 0, sp = 0;
    int64_t tp = t0, next = t0 + NS;
    bool measuring = false, ended = false;
    uint32_t seq = 0;
    uint32_t nkeys = static_cast<uint32_t>(opt.keys);
    int64_t burst_period = opt.rate > 0 ? static_cast<int64_t>(1e9 * static_cast<double>(opt.burst) / opt.rate) : 0;
    int64_t next_burst = start;
    long in_burst = 0;
    int64_t last_fail_log = 0;
    while (!g_stop.load())
    {
        int64_t now = now_ns();
        if (!measuring && now >= t0)
        {
            measuring = true;
            s0 = sp = written;
            r.cpu0 = cpu_mark();
        }
        if (measuring && !ended && now >= next && next <= t_end)
        {
            double dt = static_cast<double>(next - tp) / 1e9;
            TimelineEntry te;
            te.t = static_cast<double>(next - t0) / 1e9;
            te.count = written - sp;
            te.samples_per_s = static_cast<double>(written - sp) / dt;
            te.mbit_per_s = static_cast<double>((written - sp) * payload) * 8.0 / dt / 1e6;
            r.timeline.push_back(te);
            if (!opt.quiet)
            {
                std::fprintf(stderr, "t=%.1f written/s=%.0f Mbit/s=%.2f\n", te.t, te.samples_per_s, te.mbit_per_s);
            }
            sp = written;
            tp = next;
            next += NS;
        }
        if (!ended && now >= t_end)
        {
            ended = true;
            s1 = written;
            r.cpu1 = cpu_mark();
        }
        if (now >= t_stop)
        {
            break;
        }
        if (burst_period > 0 && in_burst == 0)
        {
            if (now < next_burst)
            {
                int64_t wake = std::min({next_burst, next, t_stop});
                if (wake > now)
                {
                    std::this_thread::sleep_for(std::chrono::nanoseconds(wake - now));
                }
                continue;
            }
            next_burst += burst_period;
            if (next_burst < now - NS)
            {
                next_burst = now; // far behind: do not burst to catch up
            }
        }
        s.seq = seq;
        s.keyval = seq % nkeys;
        if (!w->write(&s))
        {
            // Reliable KEEP_ALL with a full history: write() blocked max_blocking_time (1 s).
            if (now - last_fail_log > NS)
            {
                std::fprintf(stderr, "fastdds_perf: pub: write of sample %u timed out; retrying\n", seq);
                last_fail_log = now;
            }
            continue;
        }
        ++seq;
        ++written;
        if (burst_period > 0 && ++in_burst >= opt.burst)
        {
            in_burst = 0;
        }
    }
    if (!measuring)
    {
        r.cpu0 = cpu_mark();
        s0 = written;
    }
    if (!ended)
    {
        s1 = written;
        r.cpu1 = cpu_mark();
        t_end = std::max(t0, std::min(now_ns(), t_end));
    }
    r.samples = s1 - s0;
    r.bytes = r.samples * payload;
    r.seconds = static_cast<double>(t_end - t0) / 1e9;
    if (!opt.quiet)
    {
        double sec = r.seconds > 0 ? r.seconds : 1e-9;
        std::fprintf(stderr, "fastdds_perf pub: %" PRIu64 " samples written in %.2f s: %.0f samples/s\n",
                r.samples, r.seconds, static_cast<double>(r.samples) / sec);
    }
    write_json(r);
    teardown(e);
    return 0;
}

} // namespace

int main(
        int argc,
        char** argv)
{
    parse_options(argc, argv);

    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);

    // Fast DDS's log messages go to stderr: stdout carries only the JSON.
    {
        std::unique_ptr<StdoutErrConsumer> c(new StdoutErrConsumer);
        c->stderr_threshold(Log::Kind::Info);
        Log::ClearConsumers();
        Log::RegisterConsumer(std::move(c));
    }

    int rc = 0;
    switch (opt.mode)
    {
        case Mode::Ping:
        case Mode::Intra:
            rc = opt.complex ? run_ping<PerfComplex>() : run_ping<KeyedSeq>();
            break;
        case Mode::Pong:
            rc = opt.complex ? run_pong<PerfComplex>() : run_pong<KeyedSeq>();
            break;
        case Mode::Pub:
            rc = opt.complex ? run_pub<PerfComplex>() : run_pub<KeyedSeq>();
            break;
        case Mode::Sub:
            rc = opt.complex ? run_sub<PerfComplex>() : run_sub<KeyedSeq>();
            break;
    }
    Log::Flush();
    return rc;
}
