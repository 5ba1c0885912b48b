#include "vin/diagnostics/output/scan_output.h"

#include <string>

#include "vin/diagnostics/json/json_encoding.h"
#include "vin/diagnostics/output/diff_markdown.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

std::string where(const ScanFinding& f) {
  std::string at = f.member ? "member " + printable(*f.member, 200) : std::string();
  if (f.offset) at += (at.empty() ? "offset " : " offset ") + std::to_string(*f.offset);
  return at;
}

std::string first_finding(const ScannedFile& file) {
  if (file.findings.empty()) return "-";
  const ScanFinding& f = file.findings.front();
  return f.severity + " " + f.kind + " " + printable(f.name, 200) + (f.called ? " (called)" : "");
}

void write_table(std::ostream& out, const std::vector<ScannedFile>& files) {
  std::size_t runs = 0, unjudged = 0;
  for (const ScannedFile& file : files) {
    out << file.summary.verdict << "  " << file.summary.format << "  "
        << printable(file.summary.file, 400) << "  " << first_finding(file) << "\n";
    runs += file.summary.verdict == "runs-code";
    unjudged += file.summary.verdict == "cannot-judge";
  }
  for (const ScannedFile& file : files) {
    if (file.findings.empty()) continue;
    out << "\n" << printable(file.summary.file, 400) << ":\n";
    for (const ScanFinding& f : file.findings) {
      const std::string at = where(f);
      out << "  " << f.severity << " " << f.kind << " " << printable(f.name, 400)
          << (f.called ? " (called)" : "") << (at.empty() ? "" : " at " + at) << ": "
          << printable(f.reason, 2000) << "\n";
    }
  }
  out << "\n" << files.size() << (files.size() == 1 ? " file" : " files") << ": " << runs
      << " would run code, " << unjudged << " cannot be judged, "
      << files.size() - runs - unjudged << " load as data (torch "
      << (files.empty() ? "" : files.front().summary.torch_version) << "'s weights_only list)\n";
}

void write_markdown(std::ostream& out, const std::vector<ScannedFile>& files) {
  std::size_t runs = 0, unjudged = 0;
  for (const ScannedFile& file : files) {
    runs += file.summary.verdict == "runs-code";
    unjudged += file.summary.verdict == "cannot-judge";
  }
  std::string text = "**vin-inspect scan**: " + std::to_string(files.size()) +
                     (files.size() == 1 ? " file, " : " files, ") + std::to_string(runs) +
                     " would run code, " + std::to_string(unjudged) + " cannot be judged\n\n" +
                     "| verdict | format | file | first finding |\n| --- | --- | --- | --- |\n";
  std::size_t left_out = 0;
  auto add = [&](const std::string& row) {
    if (text.size() + row.size() > kMarkdownMaxBytes - 200) {
      ++left_out;
      return;
    }
    text += row;
  };
  for (const ScannedFile& file : files)
    add("| " + file.summary.verdict + " | " + markdown_code(file.summary.format) + " | " +
        markdown_code(file.summary.file) + " | " +
        (file.findings.empty() ? std::string("-") : markdown_code(first_finding(file))) + " |\n");
  bool any = false;
  for (const ScannedFile& file : files)
    for (const ScanFinding& f : file.findings) {
      if (!any) {
        text += "\n| file | where | severity | kind | name | called | reason |\n"
                "| --- | --- | --- | --- | --- | --- | --- |\n";
        any = true;
      }
      add("| " + markdown_code(f.file) + " | " + markdown_code(where(f)) + " | " + f.severity +
          " | " + f.kind + " | " + markdown_code(f.name) + " | " + (f.called ? "yes" : "no") +
          " | " + markdown_code(f.reason) + " |\n");
    }
  if (left_out)
    text += "\n" + std::to_string(left_out) +
            " rows left out (the output stays under 1,000,000 bytes); `--format jsonl` has "
            "them all\n";
  out << text;
}

}  // namespace

void write_scan(std::ostream& out, const std::vector<ScannedFile>& files, OutputFormat format) {
  switch (format) {
    case OutputFormat::jsonl:
      for (const ScannedFile& file : files) {
        for (const ScanFinding& f : file.findings)
          out << dump_record_line("ScanFinding", to_json(f)) << "\n";
        out << dump_record_line("ScanSummary", to_json(file.summary)) << "\n";
      }
      return;
    case OutputFormat::json: {
      Json doc = Json::object();
      doc["summaries"] = Json::array();
      doc["findings"] = Json::array();
      for (const ScannedFile& file : files) {
        doc["summaries"].push_back(to_json(file.summary));
        for (const ScanFinding& f : file.findings) doc["findings"].push_back(to_json(f));
      }
      out << dump_pretty(doc) << "\n";
      return;
    }
    case OutputFormat::table:
      write_table(out, files);
      return;
    case OutputFormat::markdown:
      write_markdown(out, files);
      return;
  }
}

}  // namespace vin::diagnostics
