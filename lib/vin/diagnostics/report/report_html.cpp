#include "vin/diagnostics/report/report_html.h"

#include "vin/diagnostics/report/html_embedding.h"
#include "vin/diagnostics/report/report_assets.h"

namespace vin::diagnostics {
namespace {

// Everything but the data, in order: the parts around it
std::string before_data() {
  std::string page;
  page += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // before any script or style: nothing loads but these two, and nothing at all from elsewhere
  page += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src ";
  page += csp_hash(kReportScript);
  page += "; style-src ";
  page += csp_hash(kReportStyle);
  page += "; base-uri 'none'; form-action 'none'\">\n";
  page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  page += "<meta name=\"generator\" content=\"vin-inspect report\">\n";
  page += "<title>vin-inspect report</title>\n<style>";
  page += kReportStyle;
  page += "</style>\n</head>\n<body>\n";
  page += kReportBody;
  page += "<script type=\"application/json\" id=\"vin-data\">";
  return page;
}

std::string after_data() {
  std::string page = "</script>\n<script>";
  page += kReportScript;
  page += "</script>\n</body>\n</html>\n";
  return page;
}

}  // namespace

std::string report_html(const Json& data) {
  return before_data() + script_json(data) + after_data();
}

std::size_t report_asset_bytes() { return before_data().size() + after_data().size(); }

}  // namespace vin::diagnostics
