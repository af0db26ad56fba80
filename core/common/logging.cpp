// SPDX-License-Identifier: Apache-2.0
#include "core/common/logging.h"

#include <atomic>
#include <cstdio>

namespace vn {
namespace {

std::mutex g_sink_mutex;
std::shared_ptr<LogSink> g_sink = std::make_shared<StderrSink>();
std::atomic<LogLevel> g_threshold{LogLevel::kInfo};

}  // namespace

char log_level_letter(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return 'D';
    case LogLevel::kVerbose: return 'V';
    case LogLevel::kInfo: return 'I';
    case LogLevel::kWarning: return 'W';
    case LogLevel::kError: return 'E';
  }
  return '?';
}

void StderrSink::write(LogLevel level, std::string_view message) {
  // One fprintf per record keeps lines from different threads whole.
  std::fprintf(stderr, "[%c] %.*s\n", log_level_letter(level), static_cast<int>(message.size()), message.data());
}

void RingBufferSink::write(LogLevel level, std::string_view message) {
  std::lock_guard<std::mutex> lock(mutex_);
  records_.push_back(Record{level, std::string(message)});
  while (records_.size() > capacity_) records_.pop_front();
}

std::vector<RingBufferSink::Record> RingBufferSink::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {records_.begin(), records_.end()};
}

void set_log_sink(std::shared_ptr<LogSink> sink) {
  std::lock_guard<std::mutex> lock(g_sink_mutex);
  g_sink = std::move(sink);
}

void set_log_threshold(LogLevel level) { g_threshold.store(level); }

LogLevel log_threshold() { return g_threshold.load(); }

void log_message(LogLevel level, std::string_view message) {
  if (level < log_threshold()) return;
  std::shared_ptr<LogSink> sink;
  {
    std::lock_guard<std::mutex> lock(g_sink_mutex);
    sink = g_sink;
  }
  if (sink) sink->write(level, message);
}

}  // namespace vn
