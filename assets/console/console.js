// mobile-builder-mcp web console: readable times and live updates of a project page.
// The pages work without this file (plain forms, exact UTC times); it only
// - shows each <time datetime> as a relative time ("3 min ago") with the exact time in the
//   browser's time zone on hover, refreshed every 30 s;
// - keeps a project page current over Server-Sent Events (one EventSource per page): the server
//   pushes server-rendered, escaped HTML; new conversation entries go on top, and the new lines
//   of a workflow already shown are merged into its entry.
(function () {
  'use strict';
  var relative =
    typeof Intl === 'object' && Intl.RelativeTimeFormat
      ? new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' })
      : null;
  var exact =
    typeof Intl === 'object' ? new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'long' }) : null;
  var UNITS = [
    ['year', 365 * 86400],
    ['month', 30 * 86400],
    ['week', 7 * 86400],
    ['day', 86400],
    ['hour', 3600],
    ['minute', 60],
  ];
  var ago = function (date) {
    var seconds = (date.getTime() - Date.now()) / 1000;
    if (Math.abs(seconds) < 45) return 'just now';
    for (var i = 0; i < UNITS.length; i++) {
      if (Math.abs(seconds) >= UNITS[i][1] || UNITS[i][0] === 'minute')
        return relative.format(Math.round(seconds / UNITS[i][1]), UNITS[i][0]);
    }
    return 'just now';
  };
  var showTimes = function (root) {
    if (!relative || !exact) return;
    var times = (root || document).querySelectorAll('time[datetime]');
    for (var i = 0; i < times.length; i++) {
      var date = new Date(times[i].getAttribute('datetime'));
      if (isNaN(date.getTime())) continue;
      times[i].textContent = ago(date);
      times[i].title = exact.format(date);
      times[i].setAttribute('data-relative', 'yes');
    }
  };
  showTimes(document);
  window.setInterval(function () {
    showTimes(document);
  }, 30000);

  var body = document.body;
  var url = body && body.getAttribute('data-events');
  if (!url || typeof window.EventSource !== 'function') return;
  var live = document.getElementById('live');
  var setLive = function (state, text) {
    if (!live) return;
    live.setAttribute('data-state', state);
    live.textContent = text;
  };
  var replace = function (id, html) {
    var el = document.getElementById(id);
    if (!el) return;
    el.innerHTML = html;
    showTimes(el);
  };
  // Merges the entries of new messages into the conversation (newest first; see renderMessages).
  var addEntries = function (html) {
    var list = document.getElementById('messages');
    if (!list) return;
    var incoming = document.createElement('ol');
    incoming.innerHTML = html;
    var entries = Array.prototype.slice.call(incoming.children).reverse();
    for (var i = 0; i < entries.length; i++) {
      var entry = entries[i];
      var shown = entry.id ? document.getElementById(entry.id) : null;
      if (shown) {
        var lines = shown.querySelector('.lines');
        var fresh = entry.querySelectorAll('.lines > li');
        for (var j = 0; j < fresh.length; j++) lines.appendChild(fresh[j]);
        var title = shown.querySelector('.entry-title');
        var newTitle = entry.querySelector('.entry-title');
        if (
          title &&
          newTitle &&
          title.getAttribute('data-known') !== 'yes' &&
          newTitle.getAttribute('data-known') === 'yes'
        )
          title.replaceWith(newTitle);
        // An outcome (result, error) already shown stays until another outcome arrives.
        var latest = shown.querySelector('.entry-latest');
        var newLatest = entry.querySelector('.entry-latest');
        var outcome = function (el) {
          var type = el.getAttribute('data-type');
          return type === 'result' || type === 'error';
        };
        if (outcome(newLatest) || !outcome(latest)) latest.replaceWith(newLatest);
        shown.querySelector('.entry-time').replaceWith(entry.querySelector('.entry-time'));
        var count = lines.children.length;
        var counter = shown.querySelector('.entry-count');
        counter.setAttribute('data-count', String(count));
        counter.textContent = count + (count === 1 ? ' message' : ' messages');
        shown.setAttribute('data-last-seq', entry.getAttribute('data-last-seq'));
        entry = shown;
      }
      list.insertBefore(entry, list.firstChild);
      showTimes(entry);
    }
  };
  var source = new EventSource(url);
  source.addEventListener('open', function () {
    setLive('on', 'live');
  });
  source.addEventListener('error', function () {
    setLive(
      source.readyState === EventSource.CLOSED ? 'off' : 'reconnecting',
      source.readyState === EventSource.CLOSED ? 'live updates off' : 'reconnecting…',
    );
  });
  source.addEventListener('session', function (event) {
    var data = JSON.parse(event.data);
    // Keep what the person is typing into an answer box while the panel is replaced.
    var focused = document.activeElement;
    if (focused && focused.matches && focused.matches('#session input[type=text], #session textarea') && data.active)
      return;
    replace('session', data.html);
  });
  source.addEventListener('previews', function (event) {
    replace('previews', JSON.parse(event.data).html);
  });
  source.addEventListener('messages', function (event) {
    addEntries(JSON.parse(event.data).html);
  });
  source.addEventListener('gone', function (event) {
    source.close();
    var data = JSON.parse(event.data);
    setLive('off', 'live updates stopped: ' + data.message);
  });
  source.addEventListener('signed-out', function () {
    source.close();
    window.location.assign('/signin');
  });
  window.addEventListener('pagehide', function () {
    source.close();
  });
})();
