// A value as the reference interpreter holds it while running: the public
// hone::RunValue (hone/value.h), a tensor, a sequence of tensors, or an empty
// optional.
#pragma once

#include "hone/value.h"

namespace hone::eval {

using RuntimeValue = ::hone::RunValue;

}  // namespace hone::eval
