// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace vn {

/// The process's peak resident set so far in MiB, as the kernel counts it: VmHWM of this address
/// space. getrusage's ru_maxrss is only the fallback, because it survives exec and so reports a
/// large parent's (a Python benchmark's) peak as ours.
double peak_rss_mib();

}  // namespace vn
