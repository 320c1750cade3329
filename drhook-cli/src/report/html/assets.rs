//! The page's style sheet and script, inlined into every report (no
//! network, no CDN: the page is read offline).

/// The style sheet.
pub const CSS: &str = r#"
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#1f3b57;color:#fff;padding:12px 24px}
header h1{margin:0;font-size:20px;font-weight:600}
header .sub{opacity:.8;font-size:13px}
nav{padding:6px 24px;background:#e8eef4;font-size:13px}
nav a{margin-right:14px;color:#1f3b57}
main{padding:8px 24px 40px}
section{background:#fff;border:1px solid #dde3ea;border-radius:6px;margin:14px 0;padding:10px 16px}
h2{font-size:16px;margin:4px 0 10px;color:#1f3b57}
h3{font-size:14px;margin:10px 0 6px}
table{border-collapse:collapse;font-size:13px}
th,td{padding:2px 10px 2px 0;text-align:left;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
tr:nth-child(even) td{background:#f6f8fa}
.note{color:#666;font-size:12px}
.bar{display:inline-block;height:11px;background:#4a90c2;vertical-align:middle}
.bar.self{background:#e08a3c}
.tree details{margin-left:18px}
.tree summary{cursor:pointer;white-space:nowrap;font-variant-numeric:tabular-nums}
.tree .leaf{margin-left:32px;white-space:nowrap;font-variant-numeric:tabular-nums}
.tree .t{display:inline-block;width:86px;text-align:right;color:#1f3b57}
.tree .s{display:inline-block;width:86px;text-align:right;color:#a05a1c}
.tree .c{display:inline-block;width:80px;text-align:right;color:#555;margin-right:10px}
#flamegraph{width:100%;overflow-x:auto}
#flamegraph svg{display:block;font:11px monospace}
#flamegraph rect{stroke:#fff;stroke-width:.5;cursor:pointer}
#flame-info{font-size:12px;color:#333;min-height:1.4em}
#js-errors{color:#b00;white-space:pre-wrap}
"#;

/// The script: draws the flame graph from the embedded folded stacks,
/// reports its own errors on the page, and marks the page rendered.
pub const JS: &str = r#"
(function(){
'use strict';
var errs=[];
window.addEventListener('error',function(e){
  errs.push(String(e.message));
  var p=document.getElementById('js-errors');
  if(p){p.textContent=errs.join('\n');}
});
function fmt(us){
  if(us>=1e6)return (us/1e6).toFixed(3)+' s';
  if(us>=1e3)return (us/1e3).toFixed(3)+' ms';
  return us.toFixed(0)+' \u00b5s';
}
function build(lines){
  var root={name:'all',value:0,self:0,children:{}};
  lines.forEach(function(l){
    var sp=l.lastIndexOf(' ');
    if(sp<0)return;
    var v=Number(l.slice(sp+1));
    if(!(v>0))return;
    var node=root;
    root.value+=v;
    l.slice(0,sp).split(';').forEach(function(f){
      var c=node.children[f];
      if(!c){c=node.children[f]={name:f,value:0,self:0,children:{}};}
      c.value+=v;
      node=c;
    });
    node.self+=v;
  });
  return root;
}
function hue(name){
  var h=0;
  for(var i=0;i<name.length;i++){h=(h*31+name.charCodeAt(i))>>>0;}
  return 'hsl('+(10+h%45)+','+(70+h%20)+'%,'+(55+h%12)+'%)';
}
var NS='http://www.w3.org/2000/svg';
function draw(el,info,root,focus){
  while(el.firstChild)el.removeChild(el.firstChild);
  var W=Math.max(el.clientWidth||1000,600),H=17,rows=[];
  function depth(n){var d=0;Object.keys(n.children).forEach(function(k){d=Math.max(d,depth(n.children[k]));});return d+1;}
  var D=depth(focus);
  var svg=document.createElementNS(NS,'svg');
  svg.setAttribute('width',W);svg.setAttribute('height',D*H+4);
  svg.setAttribute('id','flame-svg');
  var total=focus.value||1,count=0;
  function place(n,x,d){
    var w=n.value/total*W;
    if(w<0.3)return;
    var g=document.createElementNS(NS,'g');
    var r=document.createElementNS(NS,'rect');
    r.setAttribute('x',x.toFixed(2));r.setAttribute('y',(D-d-1)*H);
    r.setAttribute('width',Math.max(w-0.5,0.3).toFixed(2));r.setAttribute('height',H-1);
    r.setAttribute('fill',hue(n.name));
    var t=document.createElementNS(NS,'title');
    var what=n.name+': '+fmt(n.value)+' inclusive ('+(100*n.value/(root.value||1)).toFixed(2)+'% of all), '+fmt(n.self)+' self';
    t.textContent=what;
    r.appendChild(t);g.appendChild(r);
    if(w>40){
      var tx=document.createElementNS(NS,'text');
      tx.setAttribute('x',(x+3).toFixed(2));tx.setAttribute('y',(D-d-1)*H+12);
      var chars=Math.floor((w-6)/6.6);
      tx.textContent=n.name.length>chars?n.name.slice(0,Math.max(chars-1,1))+'\u2026':n.name;
      tx.setAttribute('pointer-events','none');
      g.appendChild(tx);
    }
    g.addEventListener('click',function(ev){ev.stopPropagation();draw(el,info,root,n===focus?root:n);});
    g.addEventListener('mouseover',function(){info.textContent=what;});
    svg.appendChild(g);
    count++;
    var cx=x;
    Object.keys(n.children).sort().forEach(function(k){var c=n.children[k];place(c,cx,d+1);cx+=c.value/total*W;});
  }
  place(focus,0,0);
  el.appendChild(svg);
  el.setAttribute('data-frames',String(count));
}
var data=JSON.parse(document.getElementById('flame-data').textContent);
var el=document.getElementById('flamegraph'),info=document.getElementById('flame-info');
if(data.length){
  var root=build(data);
  draw(el,info,root,root);
}else{
  el.textContent='No self time to draw.';
}
document.querySelectorAll('[data-expand]').forEach(function(b){
  b.addEventListener('click',function(){
    var open=b.getAttribute('data-expand')==='1';
    document.querySelectorAll('#tree details').forEach(function(d){d.open=open;});
  });
});
if(!errs.length){
  var ok=document.createElement('div');
  ok.id='drhook-rendered';
  ok.hidden=true;
  document.body.appendChild(ok);
}
})();
"#;
