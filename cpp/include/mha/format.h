// Numbers in messages, written exactly as printf's %.17g would write them, without printf: its
// formatting code is about a twentieth of the WebAssembly module the page downloads. It works
// on the double's exact decimal expansion, rounded half to even, as printf rounds.
#pragma once

#include <string>

namespace mha {

// printf("%.17g", value): a count or a byte count held in a double (it may be far beyond
// int64_t), exact below 2^53; or any other number, in 17 significant digits at most.
std::string format_g17(double value);

}  // namespace mha
