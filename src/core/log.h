// Internal logging macros over spdlog; include only in .cpp files.
//   HONE_LOG_DEBUG("partition: {} nodes on {}", n, name);
#pragma once

#include <spdlog/spdlog.h>

namespace hone::detail {
spdlog::logger& logger();
}  // namespace hone::detail

#define HONE_LOG_TRACE(...) ::hone::detail::logger().trace(__VA_ARGS__)
#define HONE_LOG_DEBUG(...) ::hone::detail::logger().debug(__VA_ARGS__)
#define HONE_LOG_INFO(...) ::hone::detail::logger().info(__VA_ARGS__)
#define HONE_LOG_WARN(...) ::hone::detail::logger().warn(__VA_ARGS__)
#define HONE_LOG_ERROR(...) ::hone::detail::logger().error(__VA_ARGS__)
