// fastdds_join: one process of a discovery-at-scale run (bench/join.py, issue 18) on Fast DDS
// (Debian's 2.9), doing what `tachyon perf join` does (crates/tachyon-cli/src/perf/join.rs):
//
//   fastdds_join --index I --processes P [--endpoints E] [--domain D] [--duration S]
//                [--match-timeout S]
//
// Process I creates E endpoints, half writers and half readers (RELIABLE, KEEP_LAST 1, an
// unkeyed type of one 32-bit integer): writer k on topic join_I_k, reader k on the topic of
// writer k of process (I + 1 + k mod (P - 1)) mod P. When every endpoint is matched it prints
// {"index": I, "matched_at": T} (T: seconds since the Unix epoch) and keeps its participant
// until SIGINT/SIGTERM or S seconds after starting; status 1 when not matched in time. Fast
// DDS runs with its defaults (UDPv4 and its shared-memory transport; discovery over UDP).
//
// Built by bench/build-peers.sh into target/bench/fastdds_join.

#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/publisher/qos/DataWriterQos.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/subscriber/qos/DataReaderQos.hpp>
#include <fastdds/dds/topic/Topic.hpp>
#include <fastdds/dds/topic/TopicDataType.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>

#include <fastcdr/Cdr.h>
#include <fastcdr/FastBuffer.h>

#include <getopt.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

using namespace eprosima::fastdds::dds;
using eprosima::fastrtps::rtps::InstanceHandle_t;
using eprosima::fastrtps::rtps::SerializedPayload_t;

namespace {

volatile std::sig_atomic_t stop_flag = 0;

void on_signal(
        int)
{
    stop_flag = 1;
}

struct JoinSample
{
    uint32_t seq = 0;
};

// `struct JoinSample { unsigned long seq; };`
class JoinType : public TopicDataType
{
public:

    JoinType()
    {
        setName("JoinSample");
        m_typeSize = 4 + 4;
        m_isGetKeyDefined = false;
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
            ser << static_cast<const JoinSample*>(data)->seq;
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
            deser >> static_cast<JoinSample*>(data)->seq;
        }
        catch (eprosima::fastcdr::exception::Exception&)
        {
            return false;
        }
        return true;
    }

    std::function<uint32_t()> getSerializedSizeProvider(
            void*) override
    {
        return []() -> uint32_t
               {
                   return 8;
               };
    }

    void* createData() override
    {
        return new JoinSample();
    }

    void deleteData(
            void* data) override
    {
        delete static_cast<JoinSample*>(data);
    }

    bool getKey(
            void*,
            InstanceHandle_t*,
            bool) override
    {
        return false;
    }

};

double epoch_now()
{
    using namespace std::chrono;
    return duration<double>(system_clock::now().time_since_epoch()).count();
}

long number(
        const char* name,
        const char* text,
        long lo,
        long hi)
{
    char* end = nullptr;
    long v = std::strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < lo || v > hi)
    {
        std::fprintf(stderr, "fastdds_join: --%s %s: a whole number from %ld to %ld\n", name, text, lo, hi);
        std::exit(2);
    }
    return v;
}

} // namespace

int main(
        int argc,
        char** argv)
{
    long index = -1, processes = 0, endpoints = 10, domain = 0;
    double duration = 60.0, match_timeout = 60.0;
    static const struct option longopts[] = {
        {"index", required_argument, nullptr, 'i'},
        {"processes", required_argument, nullptr, 'p'},
        {"endpoints", required_argument, nullptr, 'e'},
        {"domain", required_argument, nullptr, 'd'},
        {"duration", required_argument, nullptr, 's'},
        {"match-timeout", required_argument, nullptr, 't'},
        {nullptr, 0, nullptr, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, nullptr)) != -1)
    {
        switch (c)
        {
            case 'i': index = number("index", optarg, 0, 100000); break;
            case 'p': processes = number("processes", optarg, 2, 100000); break;
            case 'e': endpoints = number("endpoints", optarg, 1, 1000); break;
            case 'd': domain = number("domain", optarg, 0, 232); break;
            case 's': duration = std::atof(optarg); break;
            case 't': match_timeout = std::atof(optarg); break;
            default:
                std::fprintf(stderr, "usage: fastdds_join --index I --processes P [--endpoints E] "
                        "[--domain D] [--duration S] [--match-timeout S]\n");
                return 2;
        }
    }
    if (processes < 2 || index < 0 || index >= processes)
    {
        std::fprintf(stderr, "fastdds_join: --processes of at least 2 and --index below it\n");
        return 2;
    }
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    auto started = std::chrono::steady_clock::now();
    auto elapsed = [&]()
            {
                return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
            };

    DomainParticipantFactory* factory = DomainParticipantFactory::get_instance();
    DomainParticipant* dp = factory->create_participant(static_cast<DomainId_t>(domain),
                    PARTICIPANT_QOS_DEFAULT);
    if (dp == nullptr)
    {
        std::fprintf(stderr, "fastdds_join: create_participant failed\n");
        return 1;
    }
    TypeSupport type(new JoinType());
    type.register_type(dp);
    Publisher* publisher = dp->create_publisher(PUBLISHER_QOS_DEFAULT);
    Subscriber* subscriber = dp->create_subscriber(SUBSCRIBER_QOS_DEFAULT);
    DataWriterQos wq = DATAWRITER_QOS_DEFAULT;
    wq.reliability().kind = RELIABLE_RELIABILITY_QOS;
    wq.history().kind = KEEP_LAST_HISTORY_QOS;
    wq.history().depth = 1;
    DataReaderQos rq = DATAREADER_QOS_DEFAULT;
    rq.reliability().kind = RELIABLE_RELIABILITY_QOS;
    rq.history().kind = KEEP_LAST_HISTORY_QOS;
    rq.history().depth = 1;
    std::vector<DataWriter*> writers;
    std::vector<DataReader*> readers;
    for (long k = 0; k < (endpoints + 1) / 2; ++k)
    {
        std::string name = "join_" + std::to_string(index) + "_" + std::to_string(k);
        Topic* t = dp->create_topic(name, "JoinSample", TOPIC_QOS_DEFAULT);
        DataWriter* w = t ? publisher->create_datawriter(t, wq) : nullptr;
        if (w == nullptr)
        {
            std::fprintf(stderr, "fastdds_join: writer on %s failed\n", name.c_str());
            return 1;
        }
        writers.push_back(w);
    }
    for (long k = 0; k < endpoints / 2; ++k)
    {
        long owner = (index + 1 + k % (processes - 1)) % processes;
        std::string name = "join_" + std::to_string(owner) + "_" + std::to_string(k);
        Topic* t = dp->create_topic(name, "JoinSample", TOPIC_QOS_DEFAULT);
        DataReader* r = t ? subscriber->create_datareader(t, rq) : nullptr;
        if (r == nullptr)
        {
            std::fprintf(stderr, "fastdds_join: reader on %s failed\n", name.c_str());
            return 1;
        }
        readers.push_back(r);
    }
    for (;;)
    {
        bool matched = true;
        for (DataWriter* w : writers)
        {
            PublicationMatchedStatus st;
            matched = matched && w->get_publication_matched_status(st) == ReturnCode_t::RETCODE_OK &&
                    st.current_count >= 1;
        }
        for (DataReader* r : readers)
        {
            SubscriptionMatchedStatus st;
            matched = matched && r->get_subscription_matched_status(st) == ReturnCode_t::RETCODE_OK &&
                    st.current_count >= 1;
        }
        if (matched)
        {
            break;
        }
        if (stop_flag || elapsed() > match_timeout)
        {
            std::fprintf(stderr, "fastdds_join: process %ld: not every endpoint matched within %.1f s\n",
                    index, elapsed());
            dp->delete_contained_entities();
            factory->delete_participant(dp);
            return 1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::printf("{\"index\": %ld, \"matched_at\": %.6f}\n", index, epoch_now());
    std::fflush(stdout);
    while (!stop_flag && elapsed() < duration)
    {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    dp->delete_contained_entities();
    factory->delete_participant(dp);
    return 0;
}
