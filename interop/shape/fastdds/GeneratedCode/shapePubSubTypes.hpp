// The Fast DDS 2.9 type support of ShapeType, as fastddsgen 2.x would generate it: plain CDR
// (XCDR1, encapsulation CDR_LE/CDR_BE) through fastcdr 1.x, whatever the writer's
// DATA_REPRESENTATION says — fastddsgen 2.x and fastcdr 1.x write nothing else, and read an
// XCDR2 payload's DHEADER as if it were the first member (so Fast DDS 2.9 cannot read
// @appendable XCDR2 samples; docs/interop.md). Key hash: MD5 of the big-endian key (the key,
// string<128>, may exceed 16 octets). Our code, no part of the suite's.
#ifndef TACHYON_SHAPE_PUBSUBTYPES_HPP
#define TACHYON_SHAPE_PUBSUBTYPES_HPP

#include <fastcdr/Cdr.h>
#include <fastcdr/FastBuffer.h>
#include <fastdds/dds/topic/TopicDataType.hpp>
#include <fastrtps/types/DynamicTypeBuilderFactory.h>
#include <fastrtps/types/DynamicTypeBuilderPtr.h>
#include <fastrtps/types/TypeObjectFactory.h>
#include <fastrtps/utils/md5.h>

#include "shape.hpp"

// ShapeType's TypeObject in Fast DDS's type registry, as fastddsgen's registershapeTypes()
// puts it there: Fast DDS 2.9's DDSSQL content filter finds the type's members through it
// (without it, create_contentfilteredtopic fails).
inline void register_shape_type_object()
{
    using namespace eprosima::fastrtps::types;
    DynamicTypeBuilderFactory* f = DynamicTypeBuilderFactory::get_instance();
    if (TypeObjectFactory::get_instance()->get_type_identifier("ShapeType", true) != nullptr)
    {
        return;
    }
    DynamicTypeBuilder_ptr b = f->create_struct_builder();
    b->set_name("ShapeType");
    b->add_member(0, "color", f->create_string_type(128));
    b->apply_annotation_to_member(0, ANNOTATION_KEY_ID, "value", "true");
    b->add_member(1, "x", f->create_int32_type());
    b->add_member(2, "y", f->create_int32_type());
    b->add_member(3, "shapesize", f->create_int32_type());
    DynamicTypeBuilder_ptr seq = f->create_sequence_builder(f->create_byte_type());
    b->add_member(4, "additional_payload_size", seq->build());
    DynamicType_ptr t = b->build();
    TypeIdentifier identifier;
    TypeObject object;
    f->build_type_identifier(t, identifier, true);
    f->build_type_object(t, object, true);
    TypeObjectFactory::get_instance()->add_type_object("ShapeType", &identifier, &object);
}

class ShapeTypePubSubType : public eprosima::fastdds::dds::TopicDataType
{
public:
    using SerializedPayload_t = eprosima::fastrtps::rtps::SerializedPayload_t;
    using InstanceHandle_t = eprosima::fastrtps::rtps::InstanceHandle_t;

    ShapeTypePubSubType()
    {
        setName("ShapeType");
        register_shape_type_object();
        // Not announced (the suite's configurator disables type propagation for Fast DDS 3
        // the same way): Cyclone DDS 0.10 rejects Fast DDS 2.9's TYPE_INFORMATION.
        auto_fill_type_information(false);
        auto_fill_type_object(false);
        // 4 (encapsulation) + string<128> + 3 longs + a 100 kB payload and headroom.
        m_typeSize = 4 + 4 + 129 + 3 + 12 + 4 + 1024 * 1024;
        m_isGetKeyDefined = true;
    }

    bool serialize(void* data, SerializedPayload_t* payload) override
    {
        const ShapeType& s = *static_cast<const ShapeType*>(data);
        eprosima::fastcdr::FastBuffer fb(reinterpret_cast<char*>(payload->data), payload->max_size);
        eprosima::fastcdr::Cdr ser(fb, eprosima::fastcdr::Cdr::DEFAULT_ENDIAN,
                eprosima::fastcdr::Cdr::DDS_CDR);
        payload->encapsulation = ser.endianness() == eprosima::fastcdr::Cdr::BIG_ENDIANNESS ?
                CDR_BE : CDR_LE;
        try
        {
            ser.serialize_encapsulation();
            ser << s.color() << s.x() << s.y() << s.shapesize() << s.additional_payload_size();
        }
        catch (eprosima::fastcdr::exception::Exception&)
        {
            return false;
        }
        payload->length = static_cast<uint32_t>(ser.getSerializedDataLength());
        return true;
    }

    bool deserialize(SerializedPayload_t* payload, void* data) override
    {
        ShapeType& s = *static_cast<ShapeType*>(data);
        eprosima::fastcdr::FastBuffer fb(reinterpret_cast<char*>(payload->data), payload->length);
        eprosima::fastcdr::Cdr deser(fb, eprosima::fastcdr::Cdr::DEFAULT_ENDIAN,
                eprosima::fastcdr::Cdr::DDS_CDR);
        try
        {
            deser.read_encapsulation();
            payload->encapsulation = deser.endianness() == eprosima::fastcdr::Cdr::BIG_ENDIANNESS ?
                    CDR_BE : CDR_LE;
            deser >> s.color() >> s.x() >> s.y() >> s.shapesize();
            // fastddsgen 2.x reads a sequence member only while the buffer has bytes left.
            s.additional_payload_size().clear();
            if (deser.getSerializedDataLength() < payload->length)
            {
                deser >> s.additional_payload_size();
            }
        }
        catch (eprosima::fastcdr::exception::Exception&)
        {
            return false;
        }
        return true;
    }

    std::function<uint32_t()> getSerializedSizeProvider(void* data) override
    {
        return [data]() -> uint32_t
               {
                   const ShapeType& s = *static_cast<const ShapeType*>(data);
                   return static_cast<uint32_t>(4 + 4 + s.color().size() + 1 + 3 + 12 + 4 +
                          s.additional_payload_size().size() + 4);
               };
    }

    void* createData() override
    {
        return new ShapeType();
    }

    void deleteData(void* data) override
    {
        delete static_cast<ShapeType*>(data);
    }

    bool getKey(void* data, InstanceHandle_t* handle, bool /*force_md5*/ = false) override
    {
        const ShapeType& s = *static_cast<const ShapeType*>(data);
        // The key-only form, big-endian: the string's length (with its NUL), then its octets.
        std::vector<uint8_t> key;
        uint32_t n = static_cast<uint32_t>(s.color().size() + 1);
        key.push_back(static_cast<uint8_t>(n >> 24));
        key.push_back(static_cast<uint8_t>(n >> 16));
        key.push_back(static_cast<uint8_t>(n >> 8));
        key.push_back(static_cast<uint8_t>(n));
        key.insert(key.end(), s.color().begin(), s.color().end());
        key.push_back(0);
        MD5 md5;
        md5.init();
        md5.update(reinterpret_cast<const char*>(key.data()), static_cast<unsigned>(key.size()));
        md5.finalize();
        for (int i = 0; i < 16; ++i)
        {
            handle->value[i] = md5.digest[i];
        }
        return true;
    }
};

#endif
