// Force-included into the suite's srcCxx/shape_main.cxx when interop/shape/build-peers.sh
// builds it against Debian's Fast DDS 2.9: the one name of Fast DDS 3 its configurator uses
// that 2.9 spells differently (return codes are a class there). Our code.
#ifndef TACHYON_FASTDDS29_COMPAT_HPP
#define TACHYON_FASTDDS29_COMPAT_HPP

#include <fastrtps/types/TypesBase.h>

namespace eprosima {
namespace fastdds {
namespace dds {
static const eprosima::fastrtps::types::ReturnCode_t RETCODE_OK =
        eprosima::fastrtps::types::ReturnCode_t::RETCODE_OK;
} // namespace dds
} // namespace fastdds
} // namespace eprosima

#endif
