// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "tui/canvas.h"

namespace vn::tui {

/// A one-row progress bar: "label [██████▌     ]  42%  ETA 1m05s". When the row is narrow the
/// ETA goes first, then the label is shortened, then the brackets; the percentage stays longest.
class ProgressBar {
 public:
  /// Sets the fraction done (clamped to 0..1; NaN counts as 0), the label and the ETA text.
  void set(double fraction, std::string label, std::string eta_text = {});
  /// The values of the last set(); the fraction clamped.
  double fraction() const { return fraction_; }
  const std::string& label() const { return label_; }
  const std::string& eta_text() const { return eta_text_; }

  /// Draws into the first row of `area`: the bar in kAccent, the rest in kDefault.
  void draw(Canvas& canvas, Rect area) const;

  /// "ETA 42s", "ETA 3m05s", "ETA 1h02m"; "ETA --" for a negative or non-finite estimate.
  static std::string format_eta(double seconds);
  /// Seconds left if the work continues at the average rate so far: elapsed × (1 − f) / f.
  /// NaN when nothing is done yet (f ≤ 0).
  static double estimate_remaining(double elapsed_seconds, double fraction);

 private:
  double fraction_ = 0;
  std::string label_;
  std::string eta_text_;
};

}  // namespace vn::tui
