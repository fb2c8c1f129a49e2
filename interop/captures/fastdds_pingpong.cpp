// Fast DDS 2.9.x traffic generator for the RTPS captures in this directory.
//
// One binary, two modes:
//   fastdds_pingpong pub   -- writes 50 samples on a keyed topic (4 instances, one sample of
//                             70000 octets so that it is sent as DATA_FRAG), 10 samples on an
//                             unkeyed topic, then unregisters one instance and disposes another,
//                             waits for acknowledgements and exits.
//   fastdds_pingpong sub   -- reads both topics until the writer has gone (or a timeout), exits.
//
// Both sides use RELIABLE reliability and VOLATILE durability explicitly (Fast DDS defaults
// differ between DataWriter and DataReader) and UDPv4 only (the builtin shared-memory transport is
// switched off, otherwise nothing would appear on the loopback interface).
//
// The data type is hand-written (no fastddsgen):
//   struct KeyedSample   { @key long id; unsigned long seq; sequence<octet> data; };
//   struct UnkeyedSample {      long id; unsigned long seq; sequence<octet> data; };
// serialised as plain CDR (XCDR1) with fastcdr.
//
// Build (see capture.sh):
//   g++ -O1 -std=c++17 -o fastdds_pingpong fastdds_pingpong.cpp -lfastrtps -lfastcdr -lpthread

#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/domain/qos/DomainParticipantQos.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/publisher/qos/DataWriterQos.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/subscriber/qos/DataReaderQos.hpp>
#include <fastdds/dds/topic/Topic.hpp>
#include <fastdds/dds/topic/TopicDataType.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastrtps/utils/md5.h>

#include <fastcdr/Cdr.h>
#include <fastcdr/FastBuffer.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace eprosima::fastdds::dds;
using eprosima::fastrtps::rtps::InstanceHandle_t;
using eprosima::fastrtps::rtps::SerializedPayload_t;

struct Sample
{
    int32_t id = 0;
    uint32_t seq = 0;
    std::vector<uint8_t> data;
};

class SampleType : public TopicDataType
{
public:
    explicit SampleType(
            bool keyed)
    {
        setName(keyed ? "tachyon::KeyedSample" : "tachyon::UnkeyedSample");
        m_typeSize = 4 /* encapsulation */ + 4 + 4 + 4 + 128 * 1024;
        m_isGetKeyDefined = keyed;
    }

    bool serialize(
            void* data,
            SerializedPayload_t* payload) override
    {
        const Sample* s = static_cast<const Sample*>(data);
        eprosima::fastcdr::FastBuffer fb(reinterpret_cast<char*>(payload->data), payload->max_size);
        eprosima::fastcdr::Cdr ser(fb, eprosima::fastcdr::Cdr::DEFAULT_ENDIAN,
                eprosima::fastcdr::Cdr::DDS_CDR);
        payload->encapsulation = ser.endianness() == eprosima::fastcdr::Cdr::BIG_ENDIANNESS ?
                CDR_BE : CDR_LE;
        try
        {
            ser.serialize_encapsulation();
            ser << s->id << s->seq << s->data;
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
        Sample* s = static_cast<Sample*>(data);
        eprosima::fastcdr::FastBuffer fb(reinterpret_cast<char*>(payload->data), payload->length);
        eprosima::fastcdr::Cdr deser(fb, eprosima::fastcdr::Cdr::DEFAULT_ENDIAN,
                eprosima::fastcdr::Cdr::DDS_CDR);
        try
        {
            deser.read_encapsulation();
            payload->encapsulation = deser.endianness() == eprosima::fastcdr::Cdr::BIG_ENDIANNESS ?
                    CDR_BE : CDR_LE;
            deser >> s->id >> s->seq >> s->data;
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
                   const Sample* s = static_cast<const Sample*>(data);
                   return static_cast<uint32_t>(4 + 4 + 4 + 4 + s->data.size() + 4);
               };
    }

    void* createData() override
    {
        return new Sample();
    }

    void deleteData(
            void* data) override
    {
        delete static_cast<Sample*>(data);
    }

    bool getKey(
            void* data,
            InstanceHandle_t* handle,
            bool force_md5 = false) override
    {
        if (!m_isGetKeyDefined)
        {
            return false;
        }
        const Sample* s = static_cast<const Sample*>(data);
        // Key hash: the key members serialised as big-endian CDR, zero-padded to 16 octets
        // (the maximum key size is 4 < 16, so no MD5 unless forced).
        uint8_t key[16] = {0};
        uint32_t id = static_cast<uint32_t>(s->id);
        key[0] = static_cast<uint8_t>(id >> 24);
        key[1] = static_cast<uint8_t>(id >> 16);
        key[2] = static_cast<uint8_t>(id >> 8);
        key[3] = static_cast<uint8_t>(id);
        if (force_md5)
        {
            MD5 md5;
            md5.init();
            md5.update(reinterpret_cast<const char*>(key), 4);
            md5.finalize();
            for (int i = 0; i < 16; ++i)
            {
                handle->value[i] = md5.digest[i];
            }
        }
        else
        {
            for (int i = 0; i < 16; ++i)
            {
                handle->value[i] = key[i];
            }
        }
        return true;
    }

};

static DomainParticipant* make_participant(
        const char* name)
{
    DomainParticipantQos pqos = PARTICIPANT_QOS_DEFAULT;
    pqos.name(name);
    // UDPv4 only: no shared-memory transport, so that everything is visible on lo.
    pqos.transport().use_builtin_transports = false;
    auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
    pqos.transport().user_transports.push_back(udp);
    return DomainParticipantFactory::get_instance()->create_participant(0, pqos);
}

static int run_pub()
{
    DomainParticipant* dp = make_participant("tachyon-capture-pub");
    if (dp == nullptr)
    {
        return 2;
    }
    TypeSupport keyed(new SampleType(true));
    TypeSupport unkeyed(new SampleType(false));
    keyed.register_type(dp);
    unkeyed.register_type(dp);
    Topic* tk = dp->create_topic("TachyonKeyed", keyed.get_type_name(), TOPIC_QOS_DEFAULT);
    Topic* tu = dp->create_topic("TachyonUnkeyed", unkeyed.get_type_name(), TOPIC_QOS_DEFAULT);
    Publisher* pub = dp->create_publisher(PUBLISHER_QOS_DEFAULT);

    DataWriterQos wq = DATAWRITER_QOS_DEFAULT;
    wq.reliability().kind = RELIABLE_RELIABILITY_QOS;
    wq.durability().kind = VOLATILE_DURABILITY_QOS;
    wq.history().kind = KEEP_LAST_HISTORY_QOS;
    wq.history().depth = 1; // so that removed, unacknowledged samples are announced by GAP
    wq.endpoint().history_memory_policy =
            eprosima::fastrtps::rtps::DYNAMIC_RESERVE_MEMORY_MODE;
    DataWriter* wk = pub->create_datawriter(tk, wq);
    wq.history().depth = 16;
    DataWriter* wu = pub->create_datawriter(tu, wq);
    if (wk == nullptr || wu == nullptr)
    {
        return 2;
    }

    // Wait (bounded) for the subscriber to match both writers.
    for (int i = 0; i < 100; ++i)
    {
        PublicationMatchedStatus sk, su;
        wk->get_publication_matched_status(sk);
        wu->get_publication_matched_status(su);
        if (sk.current_count > 0 && su.current_count > 0)
        {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));

    Sample s;
    for (uint32_t i = 1; i <= 50; ++i)
    {
        // Instances 1 and 2 are written once (seq 1, 2), the large sample is instance 3, all
        // others go to instance 0. With KEEP_LAST 1 the writer history then has holes
        // ({1, 2, 25, latest}), so a lost and already replaced sample is answered with GAP.
        s.id = (i <= 2) ? static_cast<int32_t>(i) : (i == 25 ? 3 : 0);
        s.seq = i;
        size_t n = (i == 25) ? 70000 : (i * 7) % 200;
        s.data.assign(n, static_cast<uint8_t>(i));
        for (size_t j = 0; j < n; ++j)
        {
            s.data[j] = static_cast<uint8_t>(i + j);
        }
        if (!wk->write(&s))
        {
            std::printf("pub: keyed write %u failed\n", i);
        }
        if (i % 5 == 0)
        {
            Sample u;
            u.id = -1;
            u.seq = i / 5;
            u.data.assign(16 + i, 0xab);
            if (!wu->write(&u))
            {
                std::printf("pub: unkeyed write %u failed\n", i);
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(i % 10 == 0 ? 50 : 10));
    }

    // Status-info inline QoS: unregister instance 1, dispose instance 2.
    Sample k;
    k.id = 1;
    wk->unregister_instance(&k, HANDLE_NIL);
    k.id = 2;
    wk->dispose(&k, HANDLE_NIL);

    eprosima::fastrtps::Duration_t wait(3, 0);
    wk->wait_for_acknowledgments(wait);
    wu->wait_for_acknowledgments(wait);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    std::printf("pub: done\n");
    dp->delete_contained_entities();
    DomainParticipantFactory::get_instance()->delete_participant(dp);
    return 0;
}

static int run_sub(
        int timeout_s)
{
    DomainParticipant* dp = make_participant("tachyon-capture-sub");
    if (dp == nullptr)
    {
        return 2;
    }
    TypeSupport keyed(new SampleType(true));
    TypeSupport unkeyed(new SampleType(false));
    keyed.register_type(dp);
    unkeyed.register_type(dp);
    Topic* tk = dp->create_topic("TachyonKeyed", keyed.get_type_name(), TOPIC_QOS_DEFAULT);
    Topic* tu = dp->create_topic("TachyonUnkeyed", unkeyed.get_type_name(), TOPIC_QOS_DEFAULT);
    Subscriber* sub = dp->create_subscriber(SUBSCRIBER_QOS_DEFAULT);

    DataReaderQos rq = DATAREADER_QOS_DEFAULT;
    rq.reliability().kind = RELIABLE_RELIABILITY_QOS;
    rq.durability().kind = VOLATILE_DURABILITY_QOS;
    rq.history().kind = KEEP_LAST_HISTORY_QOS;
    rq.history().depth = 16;
    rq.endpoint().history_memory_policy =
            eprosima::fastrtps::rtps::DYNAMIC_RESERVE_MEMORY_MODE;
    DataReader* rk = sub->create_datareader(tk, rq);
    DataReader* ru = sub->create_datareader(tu, rq);
    if (rk == nullptr || ru == nullptr)
    {
        return 2;
    }

    int data = 0, nodata = 0;
    size_t largest = 0;
    bool matched = false;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    while (std::chrono::steady_clock::now() < deadline)
    {
        for (DataReader* r : {rk, ru})
        {
            Sample s;
            SampleInfo info;
            while (r->take_next_sample(&s, &info) == ReturnCode_t::RETCODE_OK)
            {
                if (info.valid_data)
                {
                    ++data;
                    largest = std::max(largest, s.data.size());
                }
                else
                {
                    ++nodata;
                }
            }
        }
        SubscriptionMatchedStatus st;
        rk->get_subscription_matched_status(st);
        if (st.current_count > 0)
        {
            matched = true;
        }
        else if (matched)
        {
            break; // the writer has gone
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::printf("sub: %d samples, %d without data, largest %zu octets\n",
            data, nodata, largest);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    dp->delete_contained_entities();
    DomainParticipantFactory::get_instance()->delete_participant(dp);
    return 0;
}

int main(
        int argc,
        char** argv)
{
    std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "pub")
    {
        return run_pub();
    }
    if (mode == "sub")
    {
        return run_sub(argc > 2 ? std::atoi(argv[2]) : 12);
    }
    std::fprintf(stderr, "usage: %s pub | sub [timeout-seconds]\n", argv[0]);
    return 3;
}
