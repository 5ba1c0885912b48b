"""A reader of Chrome trace events as Perfetto's JSON importer reads them (trace_processor's
importers/json: the tokenizer, json_trace_parser_impl.cc, the slice tracker), used to check the
traces `vin-inspect profile --trace` writes without a browser. What it holds a trace to:

- the JSON Object Format: an object whose "traceEvents" is a list of objects, each with a
  string "ph";
- "X" (complete) events: numeric "ts" and "dur" (microseconds; the importer keeps nanoseconds,
  truncating value * 1000 as it does), integer "pid" and "tid", "dur" not negative;
- "M" (metadata) events: "process_name" and "thread_name", each with a string "args.name";
- "C" (counter) events: numeric "ts", an "args" object of numbers (a series each);
- on each thread's track the slices form a stack, as Perfetto's slice tracker requires: sorted
  by start (an enclosing slice first at an equal start), each either inside the slice open
  around it or after its end; a slice that crosses its parent's end is what the importer
  reports as `misplaced_end_event` and cuts short, so it is a problem here;
- every thread with slices named by a thread_name event, every process by a process_name event.

`problems(doc)` lists what breaks these rules (empty for a valid trace); `tracks(doc)` gives each
(pid, tid)'s slices and each counter's samples, as the importer would build them.
"""


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _ns(value):
    """A timestamp or duration in microseconds as the importer stores it: integer nanoseconds,
    value * 1000 truncated for a real number."""
    return int(value * 1000) if isinstance(value, float) else value * 1000


def tracks(doc):
    """{"slices": {(pid, tid): [(start_ns, end_ns, name, event), ...]} sorted by start (the
    enclosing first), "counters": {(pid, name): [(ts_ns, {series: value})]}, "process_names":
    {pid: name}, "thread_names": {(pid, tid): name}}. Events that break the rules are left out."""
    slices, counters, process_names, thread_names = {}, {}, {}, {}
    for event in doc.get("traceEvents", []) if isinstance(doc, dict) else []:
        if not isinstance(event, dict) or not isinstance(event.get("ph"), str):
            continue
        ph = event["ph"]
        pid = event.get("pid", 0)
        tid = event.get("tid", pid)
        if ph == "X" and _number(event.get("ts")) and _number(event.get("dur")):
            start = _ns(event["ts"])
            slices.setdefault((pid, tid), []).append(
                (start, start + _ns(event["dur"]), event.get("name"), event))
        elif ph == "C" and _number(event.get("ts")) and isinstance(event.get("args"), dict):
            counters.setdefault((pid, event.get("name")), []).append(
                (_ns(event["ts"]), event["args"]))
        elif ph == "M" and isinstance(event.get("args"), dict):
            if event.get("name") == "process_name":
                process_names[pid] = event["args"].get("name")
            elif event.get("name") == "thread_name":
                thread_names[(pid, tid)] = event["args"].get("name")
    for track in slices.values():
        # the importer's sorter orders by timestamp; at an equal start the longer slice must
        # come first to enclose the other
        track.sort(key=lambda s: (s[0], -(s[1] - s[0])))
    return {"slices": slices, "counters": counters, "process_names": process_names,
            "thread_names": thread_names}


def problems(doc):
    out = []
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        return ["not the JSON Object Format: no traceEvents list"]
    for i, event in enumerate(doc["traceEvents"]):
        if not isinstance(event, dict) or not isinstance(event.get("ph"), str):
            out.append(f"event {i}: not an object with a string ph: {event!r:.200}")
            continue
        ph = event["ph"]
        for key in ("pid", "tid"):
            if key in event and (not isinstance(event[key], int) or isinstance(event[key], bool)):
                out.append(f"event {i}: {key} {event[key]!r} is not an integer")
        if ph == "X":
            if not _number(event.get("ts")) or not _number(event.get("dur")):
                out.append(f"event {i}: a complete event without numeric ts and dur: {event!r:.200}")
            elif event["dur"] < 0:
                out.append(f"event {i}: negative dur {event['dur']}")
            if not isinstance(event.get("name"), str):
                out.append(f"event {i}: a slice without a name")
        elif ph == "M":
            if event.get("name") not in ("process_name", "thread_name"):
                out.append(f"event {i}: metadata {event.get('name')!r} Perfetto does not read")
            elif not isinstance(event.get("args", {}).get("name"), str):
                out.append(f"event {i}: {event['name']} without a string args.name")
        elif ph == "C":
            args = event.get("args")
            if not _number(event.get("ts")) or not isinstance(args, dict) or not args or \
                    not all(_number(v) for v in args.values()):
                out.append(f"event {i}: a counter needs a numeric ts and numeric args: "
                           f"{event!r:.200}")
        else:
            out.append(f"event {i}: phase {ph!r}, which this trace does not use")
    read = tracks(doc)
    for (pid, tid), track in read["slices"].items():
        if (pid, tid) not in read["thread_names"]:
            out.append(f"thread {pid}/{tid} has slices and no thread_name")
        if pid not in read["process_names"]:
            out.append(f"process {pid} has slices and no process_name")
        stack = []
        for start, end, name, _ in track:
            while stack and start >= stack[-1][1]:
                stack.pop()
            if stack and end > stack[-1][1]:
                out.append(f"thread {pid}/{tid}: {name!r} [{start}, {end}] ns crosses the end of "
                           f"{stack[-1][2]!r} [{stack[-1][0]}, {stack[-1][1]}] ns "
                           "(Perfetto: misplaced_end_event)")
                continue
            stack.append((start, end, name))
    return out


def nesting(track):
    """Each slice of a track (as tracks() sorts it) with the slice it lies in (None at the top):
    [(slice, parent)]."""
    out, stack = [], []
    for s in track:
        while stack and s[0] >= stack[-1][1]:
            stack.pop()
        out.append((s, stack[-1] if stack else None))
        stack.append(s)
    return out
