// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

namespace vn {

/// The kind of failure. Views colour and filter errors by it; the CLI maps every code except kOk
/// and kCancelled to exit code 2 (bad input), because a tool failure is never the model's fault.
enum class StatusCode {
  kOk,
  kInvalidArgument,   ///< A flag, option or value given by the user is wrong.
  kInvalidModel,      ///< The model violates the ONNX spec (structure, attribute, type).
  kUnsupportedOp,     ///< No kernel for this op, domain or opset.
  kUnsupportedAttr,   ///< The op is known but this attribute value is not handled.
  kUnsupportedDType,  ///< The op is known but not for this element type.
  kShapeMismatch,     ///< A tensor's shape disagrees with the graph or with another tensor.
  kNumericFailure,    ///< A computation could not produce a finite, meaningful result.
  kIoError,           ///< A file is missing, unreadable, truncated or malformed.
  kNotFound,          ///< A named tensor, node or file member does not exist.
  kCancelled,         ///< The user or a time limit stopped the work.
  kExternalFailure,   ///< An external command crashed, timed out, failed or wrote no usable result.
  kInternal,          ///< A bug in Vernier.
};

std::string_view status_code_name(StatusCode code);

/// Identifies the graph node an error belongs to. index is the node's position in Graph::nodes,
/// or -1 when the error concerns a tensor or file rather than a node.
struct NodeRef {
  int64_t index = -1;
  std::string name;
  std::string op_type;
};

/// The result of an operation that can fail because of its input. OK is a null pointer, so
/// returning success costs nothing. Errors carry a code, an actionable message and, for errors
/// about one node, the node. Copying shares the immutable error state.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message, std::optional<NodeRef> node = std::nullopt);

  static Status OK() { return Status(); }

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return state_ ? state_->code : StatusCode::kOk; }
  /// The message alone, without the node prefix.
  const std::string& message() const;
  /// The node the error belongs to, if any.
  const NodeRef* node() const { return state_ && state_->node ? &*state_->node : nullptr; }

  /// One line for the user: "node 12 'conv1' (Conv): message", or the message alone.
  std::string to_string() const;

  /// Returns a copy with `context` prepended to the message ("loading m.onnx: ...").
  Status with_context(std::string_view context) const;
  /// Returns a copy tagged with `node`, unless it already names a node.
  Status with_node(NodeRef node) const;

 private:
  struct State {
    StatusCode code;
    std::string message;
    std::optional<NodeRef> node;
  };
  std::shared_ptr<const State> state_;
};

/// Builds an error Status with a fmt-formatted message.
template <typename... Args>
Status make_error(StatusCode code, fmt::format_string<Args...> format, Args&&... args) {
  return Status(code, fmt::format(format, std::forward<Args>(args)...));
}

/// Aborts with a message: for broken invariants that no input file can reach. Anything a
/// malformed model or file can trigger must be a Status instead.
[[noreturn]] void check_failed(const char* file, int line, const char* condition, std::string_view message);

/// A value or the Status that explains its absence (a C++20 stand-in for std::expected).
/// Constructing from an OK Status is a programming error, and so is reading the value of an error:
/// value(), `*` and `->` abort (check_failed, naming the error) unless ok().
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : status_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    if (status_.ok()) status_ = Status(StatusCode::kInternal, "Result constructed from an OK status");
  }
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U&&, T> && !std::is_same_v<std::decay_t<U>, T> &&
                                                    !std::is_same_v<std::decay_t<U>, Status>>>
  Result(U&& value) : value_(T(std::forward<U>(value))) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  T& value() & { return checked(); }
  const T& value() const& { return checked(); }
  T&& value() && { return std::move(checked()); }
  T& operator*() & { return checked(); }
  const T& operator*() const& { return checked(); }
  T&& operator*() && { return std::move(checked()); }
  T* operator->() { return &checked(); }
  const T* operator->() const { return &checked(); }

 private:
  T& checked() {
    if (!value_) check_failed(__FILE__, __LINE__, "ok()", status_.to_string());
    return *value_;
  }
  const T& checked() const {
    if (!value_) check_failed(__FILE__, __LINE__, "ok()", status_.to_string());
    return *value_;
  }

  std::optional<T> value_;
  Status status_;
};

}  // namespace vn

#define VN_CONCAT_INNER(a, b) a##b
#define VN_CONCAT(a, b) VN_CONCAT_INNER(a, b)

/// Returns the Status of `expr` from the enclosing function if it is an error.
#define VN_RETURN_IF_ERROR(expr)                  \
  do {                                            \
    ::vn::Status vn_status_ = (expr);             \
    if (!vn_status_.ok()) return vn_status_;      \
  } while (0)

#define VN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                             \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()

/// `VN_ASSIGN_OR_RETURN(auto x, f());` declares x from f()'s value or returns f()'s error.
#define VN_ASSIGN_OR_RETURN(lhs, rexpr) VN_ASSIGN_OR_RETURN_IMPL(VN_CONCAT(vn_result_, __LINE__), lhs, rexpr)

/// Returns an error Status with a formatted message when `cond` is false.
#define VN_RETURN_IF_NOT(cond, code, ...)                        \
  do {                                                           \
    if (!(cond)) return ::vn::make_error((code), __VA_ARGS__);   \
  } while (0)

/// Aborts on a broken internal invariant (never on bad input).
#define VN_CHECK(cond, ...)                                                                   \
  do {                                                                                        \
    if (!(cond)) ::vn::check_failed(__FILE__, __LINE__, #cond, ::fmt::format("" __VA_ARGS__)); \
  } while (0)
