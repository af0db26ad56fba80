// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace vn {

enum class LogLevel { kDebug, kVerbose, kInfo, kWarning, kError };

/// One letter per level, in Polygraphy's style: D V I W E.
char log_level_letter(LogLevel level);

/// Receives formatted log records. Implementations must be thread-safe: workers log too.
class LogSink {
 public:
  virtual ~LogSink() = default;
  virtual void write(LogLevel level, std::string_view message) = 0;
};

/// Writes "[W] message" lines to stderr.
class StderrSink final : public LogSink {
 public:
  void write(LogLevel level, std::string_view message) override;
};

/// Keeps the last `capacity` records in memory, for the TUI's log pane.
class RingBufferSink final : public LogSink {
 public:
  struct Record {
    LogLevel level;
    std::string message;
  };
  explicit RingBufferSink(size_t capacity) : capacity_(capacity) {}
  void write(LogLevel level, std::string_view message) override;
  /// A copy of the records, oldest first.
  std::vector<Record> snapshot() const;

 private:
  size_t capacity_;
  mutable std::mutex mutex_;
  std::deque<Record> records_;
};

/// The process-wide logger. Records below the threshold are dropped before formatting.
/// The default sink is stderr and the default threshold kInfo.
void set_log_sink(std::shared_ptr<LogSink> sink);
void set_log_threshold(LogLevel level);
LogLevel log_threshold();
void log_message(LogLevel level, std::string_view message);

template <typename... Args>
void log(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  if (level < log_threshold()) return;
  log_message(level, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace vn

#define VN_LOG_DEBUG(...) ::vn::log(::vn::LogLevel::kDebug, __VA_ARGS__)
#define VN_LOG_VERBOSE(...) ::vn::log(::vn::LogLevel::kVerbose, __VA_ARGS__)
#define VN_LOG_INFO(...) ::vn::log(::vn::LogLevel::kInfo, __VA_ARGS__)
#define VN_LOG_WARNING(...) ::vn::log(::vn::LogLevel::kWarning, __VA_ARGS__)
#define VN_LOG_ERROR(...) ::vn::log(::vn::LogLevel::kError, __VA_ARGS__)
