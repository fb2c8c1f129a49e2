// ShapeType of the OMG suite's shape.idl for Debian's Fast DDS 2.9, written by hand in the
// form fastddsgen 2.x generates (accessors returning references), since Debian ships no
// fastddsgen. Included by the suite's srcCxx/shape_configurator_eprosima_fast_dds.h when
// interop/shape/build-peers.sh builds fastdds_shape_main. Our code, no part of the suite's.
#ifndef TACHYON_SHAPE_HPP
#define TACHYON_SHAPE_HPP

#include <cstdint>
#include <string>
#include <vector>

class ShapeType
{
public:
    std::string& color() { return color_; }
    const std::string& color() const { return color_; }
    int32_t& x() { return x_; }
    int32_t x() const { return x_; }
    int32_t& y() { return y_; }
    int32_t y() const { return y_; }
    int32_t& shapesize() { return shapesize_; }
    int32_t shapesize() const { return shapesize_; }
    std::vector<uint8_t>& additional_payload_size() { return additional_payload_size_; }
    const std::vector<uint8_t>& additional_payload_size() const
    {
        return additional_payload_size_;
    }

private:
    std::string color_;
    int32_t x_ = 0;
    int32_t y_ = 0;
    int32_t shapesize_ = 0;
    std::vector<uint8_t> additional_payload_size_;
};

#endif
