// The Fast DDS side of the interop matrix (Debian libfastrtps-dev 2.9.x, libfastcdr 1.x).
// Options and output: peer_options.h. Built by interop/build-peers.sh.
//
// The types of interop.idl are hand-written type supports (no fastddsgen), serialized as plain
// CDR (XCDR1) with fastcdr, the only representation Fast DDS 2.9 writes: asked for XCDR2, this
// peer says UNSUPPORTED and exits 3. UDPv4 is the only transport (the builtin shared memory would
// leave segments behind killed processes and carries nothing another vendor can read).

#include <fastdds/dds/core/LoanableSequence.hpp>
#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/domain/qos/DomainParticipantQos.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/publisher/qos/DataWriterQos.hpp>
#include <fastdds/dds/publisher/qos/PublisherQos.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/subscriber/qos/DataReaderQos.hpp>
#include <fastdds/dds/subscriber/qos/SubscriberQos.hpp>
#include <fastdds/dds/topic/Topic.hpp>
#include <fastdds/dds/topic/TopicDataType.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastdds/dds/topic/ContentFilteredTopic.hpp>
#include <fastrtps/types/DynamicTypeBuilderFactory.h>
#include <fastrtps/types/DynamicTypeBuilderPtr.h>
#include <fastrtps/types/TypeObjectFactory.h>
#include <fastrtps/utils/md5.h>

#include <fastcdr/Cdr.h>
#include <fastcdr/FastBuffer.h>

#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "peer_options.h"

using namespace eprosima::fastdds::dds;
using eprosima::fastrtps::rtps::InstanceHandle_t;
using eprosima::fastrtps::rtps::SerializedPayload_t;
using Clock = std::chrono::steady_clock;

static peer_options o;

struct ShapeType
{
    std::string color;
    int32_t x = 0;
    int32_t y = 0;
    int32_t shapesize = 0;
};

// @appendable in interop.idl: in XCDR1, the only representation fastcdr 1 knows, an appendable
// struct is laid out as a final one (no DHEADER), so this support serves it unchanged.
struct LargeData
{
    int32_t id = 0;
    uint32_t seq = 0;
    std::vector<uint8_t> data;
};

static void put_be32(
        uint8_t* p,
        uint32_t v)
{
    p[0] = static_cast<uint8_t>(v >> 24);
    p[1] = static_cast<uint8_t>(v >> 16);
    p[2] = static_cast<uint8_t>(v >> 8);
    p[3] = static_cast<uint8_t>(v);
}

// A type support over fastcdr: T supplies serialize/deserialize of its members, its key bytes
// (big-endian key-only form) and whether the key hash must be MD5.
template<typename T>
class PeerType : public TopicDataType
{
public:

    PeerType(
            const char* name,
            uint32_t max_size)
    {
        setName(name);
        m_typeSize = max_size;
        m_isGetKeyDefined = true;
        // Never announced: Cyclone DDS 0.10 rejects Fast DDS 2.9's TYPE_INFORMATION (the
        // TypeObject below is only for the local DDSSQL filter).
        auto_fill_type_information(false);
        auto_fill_type_object(false);
    }

    bool serialize(
            void* data,
            SerializedPayload_t* payload) override
    {
        eprosima::fastcdr::FastBuffer fb(reinterpret_cast<char*>(payload->data), payload->max_size);
        eprosima::fastcdr::Cdr ser(fb, eprosima::fastcdr::Cdr::DEFAULT_ENDIAN,
                eprosima::fastcdr::Cdr::DDS_CDR);
        payload->encapsulation = ser.endianness() == eprosima::fastcdr::Cdr::BIG_ENDIANNESS ?
                CDR_BE : CDR_LE;
        try
        {
            ser.serialize_encapsulation();
            write(ser, *static_cast<const T*>(data));
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
            read(deser, *static_cast<T*>(data));
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
                   return 4 + size(*static_cast<const T*>(data)) + 4;
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

    bool getKey(
            void* data,
            InstanceHandle_t* handle,
            bool force_md5 = false) override
    {
        std::vector<uint8_t> key = key_bytes(*static_cast<const T*>(data));
        if (force_md5 || key_needs_md5(static_cast<const T*>(nullptr)) || key.size() > 16)
        {
            MD5 md5;
            md5.init();
            md5.update(reinterpret_cast<const char*>(key.data()), static_cast<unsigned>(key.size()));
            md5.finalize();
            for (int i = 0; i < 16; ++i)
            {
                handle->value[i] = md5.digest[i];
            }
        }
        else
        {
            for (size_t i = 0; i < 16; ++i)
            {
                handle->value[i] = i < key.size() ? key[i] : 0;
            }
        }
        return true;
    }

private:

    static void write(
            eprosima::fastcdr::Cdr& s,
            const ShapeType& v)
    {
        s << v.color << v.x << v.y << v.shapesize;
    }

    static void read(
            eprosima::fastcdr::Cdr& s,
            ShapeType& v)
    {
        s >> v.color >> v.x >> v.y >> v.shapesize;
    }

    static uint32_t size(
            const ShapeType& v)
    {
        return static_cast<uint32_t>(4 + v.color.size() + 1 + 3 + 12);
    }

    // string<128>: the largest key-only form (4 + 129 octets) exceeds 16, so always MD5.
    static bool key_needs_md5(
            const ShapeType*)
    {
        return true;
    }

    static std::vector<uint8_t> key_bytes(
            const ShapeType& v)
    {
        std::vector<uint8_t> k(4 + v.color.size() + 1, 0);
        put_be32(k.data(), static_cast<uint32_t>(v.color.size() + 1));
        std::copy(v.color.begin(), v.color.end(), k.begin() + 4);
        return k;
    }

    static void write(
            eprosima::fastcdr::Cdr& s,
            const LargeData& v)
    {
        s << v.id << v.seq << v.data;
    }

    static void read(
            eprosima::fastcdr::Cdr& s,
            LargeData& v)
    {
        s >> v.id >> v.seq >> v.data;
    }

    static uint32_t size(
            const LargeData& v)
    {
        return static_cast<uint32_t>(12 + v.data.size());
    }

    static bool key_needs_md5(
            const LargeData*)
    {
        return false;
    }

    static std::vector<uint8_t> key_bytes(
            const LargeData& v)
    {
        std::vector<uint8_t> k(4);
        put_be32(k.data(), static_cast<uint32_t>(v.id));
        return k;
    }

};

// ShapeType's TypeObject in Fast DDS's type registry (fastddsgen's registerTypes() would put
// it there): Fast DDS 2.9's DDSSQL content filter finds the members through it, and
// create_contentfilteredtopic fails without it.
static void register_shape_type_object()
{
    using namespace eprosima::fastrtps::types;
    DynamicTypeBuilderFactory* f = DynamicTypeBuilderFactory::get_instance();
    DynamicTypeBuilder_ptr b = f->create_struct_builder();
    b->set_name("ShapeType");
    b->add_member(0, "color", f->create_string_type(128));
    b->apply_annotation_to_member(0, ANNOTATION_KEY_ID, "value", "true");
    b->add_member(1, "x", f->create_int32_type());
    b->add_member(2, "y", f->create_int32_type());
    b->add_member(3, "shapesize", f->create_int32_type());
    DynamicType_ptr t = b->build();
    TypeIdentifier identifier;
    TypeObject object;
    f->build_type_identifier(t, identifier, true);
    f->build_type_object(t, object, true);
    TypeObjectFactory::get_instance()->add_type_object("ShapeType", &identifier, &object);
}

static void say(
        const char* fmt,
        ...) __attribute__((format(printf, 1, 2)));

static void say(
        const char* fmt,
        ...)
{
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(stdout, fmt, ap);
    va_end(ap);
    std::fputc('\n', stdout);
    std::fflush(stdout);
}

static void sleep_ms(
        long ms)
{
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

static eprosima::fastrtps::Duration_t from_ms(
        long ms)
{
    return eprosima::fastrtps::Duration_t(static_cast<int32_t>(ms / 1000),
                   static_cast<uint32_t>((ms % 1000) * 1000000));
}

// The QoS both endpoint kinds share.
template<typename Q>
static void endpoint_qos(
        Q& q)
{
    q.reliability().kind = o.reliable ? RELIABLE_RELIABILITY_QOS : BEST_EFFORT_RELIABILITY_QOS;
    q.reliability().max_blocking_time = eprosima::fastrtps::Duration_t(10, 0);
    q.durability().kind = o.transient_local ? TRANSIENT_LOCAL_DURABILITY_QOS : VOLATILE_DURABILITY_QOS;
    if (o.depth > 0)
    {
        q.history().kind = KEEP_LAST_HISTORY_QOS;
        q.history().depth = o.depth;
    }
    else
    {
        q.history().kind = KEEP_ALL_HISTORY_QOS;
    }
    if (o.lease_ms > 0)
    {
        q.liveliness().kind = AUTOMATIC_LIVELINESS_QOS;
        q.liveliness().lease_duration = from_ms(o.lease_ms);
        q.liveliness().announcement_period = from_ms(o.lease_ms / 3);
    }
    if (o.deadline_ms > 0)
    {
        q.deadline().period = from_ms(o.deadline_ms);
    }
    if (o.strength >= 0 || o.exclusive)
    {
        q.ownership().kind = EXCLUSIVE_OWNERSHIP_QOS;
    }
    if constexpr (std::is_same<Q, DataWriterQos>::value)
    {
        if (o.strength >= 0)
        {
            q.ownership_strength().value = static_cast<uint32_t>(o.strength);
        }
    }
    // Large samples: allocate as needed instead of preallocating the maximum size per slot.
    q.endpoint().history_memory_policy = eprosima::fastrtps::rtps::DYNAMIC_RESERVE_MEMORY_MODE;
}

struct Seen
{
    int32_t matched = 0;
    bool incompatible = false;
    int32_t alive = 0;
    int32_t not_alive = 0;
    bool was_alive = false;
    bool lost = false;
};

static void report(
        DataWriter* w,
        Seen& s)
{
    PublicationMatchedStatus m;
    if (w->get_publication_matched_status(m) == ReturnCode_t::RETCODE_OK && m.current_count != s.matched)
    {
        s.matched = m.current_count;
        say("MATCHED %d", s.matched);
    }
    OfferedIncompatibleQosStatus q;
    if (w->get_offered_incompatible_qos_status(q) == ReturnCode_t::RETCODE_OK && q.total_count_change > 0)
    {
        s.incompatible = true;
        say("INCOMPATIBLE %u", static_cast<unsigned>(q.last_policy_id));
    }
    OfferedDeadlineMissedStatus d;
    if (w->get_offered_deadline_missed_status(d) == ReturnCode_t::RETCODE_OK && d.total_count_change > 0)
    {
        say("DEADLINE_MISSED %d", d.total_count);
    }
}

static void report(
        DataReader* r,
        Seen& s)
{
    SubscriptionMatchedStatus m;
    if (r->get_subscription_matched_status(m) == ReturnCode_t::RETCODE_OK && m.current_count != s.matched)
    {
        s.matched = m.current_count;
        say("MATCHED %d", s.matched);
    }
    RequestedIncompatibleQosStatus q;
    if (r->get_requested_incompatible_qos_status(q) == ReturnCode_t::RETCODE_OK && q.total_count_change > 0)
    {
        s.incompatible = true;
        say("INCOMPATIBLE %u", static_cast<unsigned>(q.last_policy_id));
    }
    RequestedDeadlineMissedStatus d;
    if (r->get_requested_deadline_missed_status(d) == ReturnCode_t::RETCODE_OK && d.total_count_change > 0)
    {
        say("DEADLINE_MISSED %d", d.total_count);
    }
    LivelinessChangedStatus l;
    if (r->get_liveliness_changed_status(l) == ReturnCode_t::RETCODE_OK &&
            (l.alive_count != s.alive || l.not_alive_count != s.not_alive))
    {
        s.alive = l.alive_count;
        s.not_alive = l.not_alive_count;
        say("LIVELINESS %d %d", s.alive, s.not_alive);
    }
    s.was_alive |= s.alive > 0;
    s.lost |= s.was_alive && s.alive == 0;
}

static void fill(
        ShapeType& s,
        long i)
{
    s.color = std::string(o.prefix) + std::to_string(i % o.instances);
    s.x = static_cast<int32_t>(i);
    s.y = static_cast<int32_t>(2 * i + 1);
    s.shapesize = static_cast<int32_t>(o.shapesize);
}

static void fill(
        LargeData& s,
        long i)
{
    s.id = static_cast<int32_t>(i % o.instances);
    s.seq = static_cast<uint32_t>(i);
    s.data.resize(static_cast<size_t>(o.size));
    for (long j = 0; j < o.size; ++j)
    {
        s.data[static_cast<size_t>(j)] = peer_large_byte(j, i);
    }
}

static void print_sample(
        const ShapeType& s)
{
    bool ok = s.y == 2 * s.x + 1;
    say("SAMPLE %s %d %d %s", s.color.c_str(), s.x, s.shapesize, ok ? "ok" : "bad");
}

static void print_sample(
        const LargeData& s)
{
    bool ok = true;
    for (size_t j = 0; j < s.data.size() && ok; ++j)
    {
        ok = s.data[j] == peer_large_byte(static_cast<long>(j), s.seq);
    }
    say("SAMPLE %d %u %zu %s", s.id, s.seq, s.data.size(), ok ? "ok" : "bad");
}

static std::string key_of(
        const ShapeType& s)
{
    return s.color;
}

static std::string key_of(
        const LargeData& s)
{
    return std::to_string(s.id);
}

template<typename T>
static int run_pub(
        DomainParticipant* dp,
        Topic* topic)
{
    PublisherQos pq = PUBLISHER_QOS_DEFAULT;
    if (o.partition != nullptr)
    {
        pq.partition().push_back(o.partition);
    }
    if (o.ordered)
    {
        pq.presentation().access_scope = TOPIC_PRESENTATION_QOS;
        pq.presentation().ordered_access = true;
        pq.presentation().hasChanged = true;
    }
    Publisher* pub = dp->create_publisher(pq);
    DataWriterQos wq = DATAWRITER_QOS_DEFAULT;
    endpoint_qos(wq);
    if (o.representation == 1)
    {
        wq.representation().m_value.push_back(XCDR_DATA_REPRESENTATION);
    }
    if (o.large)
    {
        wq.publish_mode().kind = ASYNCHRONOUS_PUBLISH_MODE;
    }
    DataWriter* w = pub == nullptr ? nullptr : pub->create_datawriter(topic, wq);
    if (w == nullptr)
    {
        std::fprintf(stderr, "fastdds_peer: cannot create the writer\n");
        return 1;
    }
    Seen seen;
    auto end = Clock::now() + std::chrono::seconds(o.timeout_s);
    if (o.expect_incompatible)
    {
        while (!seen.incompatible)
        {
            report(w, seen);
            if (Clock::now() > end)
            {
                say("TIMEOUT incompatible");
                return 2;
            }
            sleep_ms(10);
        }
        sleep_ms(o.linger_ms);
        say("DONE");
        return 0;
    }
    while (seen.matched < o.wait_match)
    {
        report(w, seen);
        if (Clock::now() > end)
        {
            say("TIMEOUT match");
            return 2;
        }
        sleep_ms(10);
    }
    peer_wait_go(&o);
    T sample;
    for (long i = 0; i < o.count; ++i)
    {
        fill(sample, i);
        if (!w->write(&sample))
        {
            std::fprintf(stderr, "fastdds_peer: write %ld failed\n", i);
            return 1;
        }
        if (o.period_ms > 0)
        {
            sleep_ms(o.period_ms);
        }
    }
    if (o.dispose)
    {
        fill(sample, 0);
        if (w->dispose(&sample, HANDLE_NIL) != ReturnCode_t::RETCODE_OK)
        {
            std::fprintf(stderr, "fastdds_peer: dispose failed\n");
            return 1;
        }
    }
    say("WRITTEN %ld", o.count);
    if (o.reliable && o.wait_match > 0)
    {
        if (w->wait_for_acknowledgments(eprosima::fastrtps::Duration_t(
                    static_cast<int32_t>(o.timeout_s), 0)) == ReturnCode_t::RETCODE_OK)
        {
            say("ACKED");
        }
        else
        {
            say("TIMEOUT acks");
        }
    }
    auto linger_end = Clock::now() + std::chrono::milliseconds(o.linger_ms);
    while (Clock::now() < linger_end)
    {
        report(w, seen);
        sleep_ms(10);
    }
    say("DONE");
    return 0;
}

template<typename T>
static int run_sub(
        DomainParticipant* dp,
        Topic* topic)
{
    SubscriberQos sq = SUBSCRIBER_QOS_DEFAULT;
    if (o.partition != nullptr)
    {
        sq.partition().push_back(o.partition);
    }
    Subscriber* sub = dp->create_subscriber(sq);
    DataReaderQos rq = DATAREADER_QOS_DEFAULT;
    endpoint_qos(rq);
    if (o.representation == 1)
    {
        rq.type_consistency().representation.m_value.push_back(XCDR_DATA_REPRESENTATION);
    }
    TopicDescription* from = topic;
    if (o.filter != nullptr)
    {
        std::vector<std::string> params(o.filter_params, o.filter_params + o.filter_param_count);
        from = dp->create_contentfilteredtopic(std::string(o.topic) + "_filtered", topic, o.filter,
                        params);
        if (from == nullptr)
        {
            std::fprintf(stderr, "fastdds_peer: cannot create the content-filtered topic\n");
            return 1;
        }
    }
    DataReader* r = sub == nullptr ? nullptr : sub->create_datareader(from, rq);
    if (r == nullptr)
    {
        std::fprintf(stderr, "fastdds_peer: cannot create the reader\n");
        return 1;
    }
    Seen seen;
    long got = 0;
    bool disposed = false;
    auto end = Clock::now() + std::chrono::seconds(o.timeout_s);
    // take() with a loan (unlike take_next_sample) also returns the samples without data
    // that tell an instance's state change.
    auto take_all = [&]() -> long
            {
                LoanableSequence<T> data;
                SampleInfoSeq infos;
                if (r->take(data, infos) != ReturnCode_t::RETCODE_OK)
                {
                    return 0;
                }
                long n = static_cast<long>(infos.length());
                for (LoanableCollection::size_type i = 0; i < infos.length(); ++i)
                {
                    const SampleInfo& info = infos[i];
                    if (info.valid_data)
                    {
                        print_sample(data[i]);
                        ++got;
                    }
                    if (info.instance_state == NOT_ALIVE_DISPOSED_INSTANCE_STATE)
                    {
                        T k;
                        std::string key = info.valid_data ? key_of(data[i]) :
                                (r->get_key_value(&k, info.instance_handle) == ReturnCode_t::RETCODE_OK ?
                                key_of(k) : std::string("?"));
                        say("DISPOSED %s", key.c_str());
                        disposed = true;
                    }
                }
                r->return_loan(data, infos);
                return n;
            };
    for (;;)
    {
        report(r, seen);
        long n = take_all();
        bool done = got >= o.expect && (!o.expect_dispose || disposed) &&
                (!o.expect_incompatible || seen.incompatible) && (!o.expect_not_alive || seen.lost);
        if (done)
        {
            break;
        }
        if (Clock::now() > end)
        {
            say("TIMEOUT got %ld", got);
            return 2;
        }
        if (o.read_period_ms > 0)
        {
            sleep_ms(o.read_period_ms);
        }
        else if (n == 0)
        {
            sleep_ms(5);
        }
    }
    auto linger_end = Clock::now() + std::chrono::milliseconds(o.linger_ms);
    // Statuses keep being reported while lingering: a deadline missed after the last sample
    // (every sample may arrive at once, repaired after a loss) shows only here.
    while (Clock::now() < linger_end)
    {
        report(r, seen);
        take_all();
        sleep_ms(10);
    }
    report(r, seen);
    say("DONE");
    return 0;
}

int main(
        int argc,
        char** argv)
{
    if (peer_parse_options(argc, argv, &o) != 0)
    {
        return 1;
    }
    if (o.representation == 2)
    {
        say("UNSUPPORTED Fast DDS 2.9 (fastcdr 1) cannot serialize XCDR2");
        return 3;
    }
    if (!o.pub && o.ordered)
    {
        say("UNSUPPORTED Fast DDS 2.9 readers do not implement PRESENTATION ordered_access");
        return 3;
    }
    if (o.suite)
    {
        // Its type support is written by hand (no fastddsgen in Debian) for the other types.
        say("UNSUPPORTED this peer has no SuiteShape type (the uint8 case: Cyclone DDS 0.10 "
            "and Tachyon)");
        return 3;
    }
    if (!o.large)
    {
        register_shape_type_object();
    }
    DomainParticipantQos pqos = PARTICIPANT_QOS_DEFAULT;
    pqos.name("fastdds_peer");
    pqos.transport().use_builtin_transports = false;
    auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
    pqos.transport().user_transports.push_back(udp);
    DomainParticipant* dp = DomainParticipantFactory::get_instance()->create_participant(
        static_cast<DomainId_t>(o.domain), pqos);
    if (dp == nullptr)
    {
        std::fprintf(stderr, "fastdds_peer: cannot create the participant\n");
        return 1;
    }
    TypeSupport type(o.large ?
            static_cast<TopicDataType*>(new PeerType<LargeData>("LargeData", 4 + 12 + 64 * 1024 * 1024)) :
            // AppendableShape is ShapeType @appendable: the same layout in XCDR1 (above).
            static_cast<TopicDataType*>(new PeerType<ShapeType>(
                o.appendable ? "AppendableShape" : "ShapeType", 4 + 4 + 129 + 3 + 12)));
    type.register_type(dp);
    Topic* topic = dp->create_topic(o.topic, type.get_type_name(), TOPIC_QOS_DEFAULT);
    if (topic == nullptr)
    {
        std::fprintf(stderr, "fastdds_peer: cannot create the topic\n");
        return 1;
    }
    int rc;
    if (o.large)
    {
        rc = o.pub ? run_pub<LargeData>(dp, topic) : run_sub<LargeData>(dp, topic);
    }
    else
    {
        rc = o.pub ? run_pub<ShapeType>(dp, topic) : run_sub<ShapeType>(dp, topic);
    }
    dp->delete_contained_entities();
    DomainParticipantFactory::get_instance()->delete_participant(dp);
    return rc;
}
