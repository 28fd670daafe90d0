// mobile-builder-mcp web console: live updates of a project page over Server-Sent Events.
// The pages work without this file (plain forms); it only keeps a project page current
// without reloading. One EventSource per page; the server pushes server-rendered, escaped HTML.
(function () {
  'use strict';
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
    if (el) el.innerHTML = html;
  };
  var source = new EventSource(url);
  source.addEventListener('open', function () {
    setLive('on', 'live');
  });
  source.addEventListener('error', function () {
    setLive(source.readyState === EventSource.CLOSED ? 'off' : 'reconnecting', source.readyState === EventSource.CLOSED ? 'live updates off' : 'reconnecting…');
  });
  source.addEventListener('session', function (event) {
    var data = JSON.parse(event.data);
    // Keep what the person is typing into an answer box while the panel is replaced.
    var focused = document.activeElement;
    if (focused && focused.matches && focused.matches('#session input[type=text], #session textarea') && data.active) return;
    replace('session', data.html);
  });
  source.addEventListener('previews', function (event) {
    replace('previews', JSON.parse(event.data).html);
  });
  source.addEventListener('messages', function (event) {
    var list = document.getElementById('messages');
    if (list) list.insertAdjacentHTML('beforeend', JSON.parse(event.data).html);
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
