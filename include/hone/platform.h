// What hone finds about the machine it runs on that a program embedding it
// may act on before anything else loads.
//
//   if (std::string core = hone::better_openblas_core(); !core.empty())
//     setenv("OPENBLAS_CORETYPE", core.c_str(), 1), execv("/proc/self/exe", argv);
#pragma once

#include <string>

namespace hone {

/// The OPENBLAS_CORETYPE this CPU should run with when the loaded OpenBLAS
/// fell back to older kernels than the CPU has (a CPU model it does not know,
/// or a virtual machine masking it), else "". OpenBLAS reads the variable only
/// when it loads, so acting on it means starting the process again.
std::string better_openblas_core();

}  // namespace hone
