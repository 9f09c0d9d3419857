// html_charts.js - report.html's charts, drawn as SVG in the browser from the plot data that `fragbench report`
// writes (FB_PLOTS, html_plots.h), one renderer per plot kind (plots.txt's SCRIPT); a strategy hidden
// with its switch leaves every chart and table row. Compiled in as html_charts_js.c (`make` turns
// this file into that one with harness/report/js2c.awk).
var FB_PLOTS=JSON.parse(document.getElementById('fb-plots').textContent);
var FB_STRATS=JSON.parse(document.getElementById('fb-strategies').textContent);
var FB_PALETTE=['#1f77b4','#ff7f0e','#2ca02c','#d62728','#9467bd','#8c564b','#e377c2','#7f7f7f','#bcbd22','#17becf','#393b79','#637939'];
var FB_HIDDEN={};
var NS=(function(){var d=document.createElement('div');d.innerHTML='<svg></svg>';return d.firstChild.namespaceURI;})();   // SVG's, as the HTML parser gives it
function colorOf(ci){return FB_PALETTE[((ci||1)-1)%12];}
function hidden(name){return !!FB_HIDDEN[name];}
function el(tag,attrs,parent,text){var e=document.createElementNS(NS,tag);for(var k in attrs)e.setAttribute(k,attrs[k]);if(text!==undefined)e.textContent=text;if(parent)parent.appendChild(e);return e;}
function fmtNum(v){if(v===null||v===undefined)return '-';var a=Math.abs(v);if(Number.isInteger(v)&&a<1e5)return String(v);if(a>=1e5||(a<1e-3&&a>0))return v.toExponential(2);if(a>=100)return v.toFixed(0);if(a>=10)return v.toFixed(1);return v.toFixed(a<1.1&&a>=0.9?3:2);}
function fmtX(v){return v===null?'-':(v<1.1?v.toFixed(3):v.toFixed(2))+'x';}
function fmtNs(v){function p(x){return String(Number(x.toPrecision(3)));}if(v>=1e9)return p(v/1e9)+' s';if(v>=1e6)return p(v/1e6)+' ms';if(v>=1e3)return p(v/1e3)+' µs';return p(+v)+' ns';}
function niceTicks(lo,hi,n,minStep){var span=hi-lo;if(!(span>0))return [lo];var step=Math.pow(10,Math.floor(Math.log10(span/n))),err=span/n/step;if(err>=7.5)step*=10;else if(err>=3.5)step*=5;else if(err>=1.5)step*=2;if(minStep&&step<minStep)step=minStep;var t=[];for(var v=Math.ceil(lo/step)*step;v<=hi+step*1e-9;v+=step)t.push(+v.toPrecision(12));return t;}
function tickFmt(t){var st=t.length>1?Math.abs(t[1]-t[0]):1,d=Math.max(0,Math.min(6,-Math.floor(Math.log10(st)+1e-9)));
  return function(v){return Math.abs(v)>=1e5?v.toExponential(1):v.toFixed(d);};}
function logTicks(lo,hi){var t=[],ms=Math.log10(hi/lo)>3?[1]:[1,2,5];for(var e=Math.floor(Math.log10(lo));e<=Math.ceil(Math.log10(hi));e++)ms.forEach(function(m){var v=m*Math.pow(10,e);if(v>=lo*0.999&&v<=hi*1.001)t.push(v);});return t;}
// a frame: svg, plot area, scales, axes with labels
function frame(box,o){
  var W=o.w||960,H=o.h||420,m=o.m||{l:70,r:20,t:16,b:52};
  var svg=el('svg',{viewBox:'0 0 '+W+' '+H,class:'chart-svg',role:'img'},box);
  svg.style.maxWidth=W+'px';
  var f={svg:svg,W:W,H:H,m:m,x0:m.l,x1:W-m.r,y0:H-m.b,y1:m.t};
  f.sx=o.xlog?function(v){return f.x0+(Math.log(v)-Math.log(o.xmin))/(Math.log(o.xmax)-Math.log(o.xmin))*(f.x1-f.x0);}
             :function(v){return f.x0+(v-o.xmin)/(o.xmax-o.xmin||1)*(f.x1-f.x0);};
  f.sy=o.ylog?function(v){return f.y0-(Math.log(v)-Math.log(o.ymin))/(Math.log(o.ymax)-Math.log(o.ymin))*(f.y0-f.y1);}
             :function(v){return f.y0-(v-o.ymin)/(o.ymax-o.ymin||1)*(f.y0-f.y1);};
  var g=el('g',{class:'axes'},svg);
  if(o.xticks!==false){var xt=o.xlog?logTicks(o.xmin,o.xmax):niceTicks(o.xmin,o.xmax,8,o.xstep);
    var xf=o.xfmt||(o.xlog?fmtNum:tickFmt(xt));
    xt.forEach(function(v){var x=f.sx(v);el('line',{x1:x,x2:x,y1:f.y1,y2:f.y0,class:'grid'},g);el('text',{x:x,y:f.y0+17,'text-anchor':'middle',class:'tick'},g,xf(v));});}
  if(o.yticks!==false){var yt=(o.ylog?logTicks(o.ymin,o.ymax):niceTicks(o.ymin,o.ymax,6)).filter(function(v){return o.ytickmin===undefined||v>=o.ytickmin;});
    var yf=o.yfmt||(o.ylog?fmtNum:tickFmt(yt));
    yt.forEach(function(v){var y=f.sy(v);el('line',{x1:f.x0,x2:f.x1,y1:y,y2:y,class:'grid'},g);el('text',{x:f.x0-7,y:y+4,'text-anchor':'end',class:'tick'},g,yf(v));});}
  el('line',{x1:f.x0,x2:f.x1,y1:f.y0,y2:f.y0,class:'axis'},g);el('line',{x1:f.x0,x2:f.x0,y1:f.y0,y2:f.y1,class:'axis'},g);
  if(o.xlab)el('text',{x:(f.x0+f.x1)/2,y:H-10,'text-anchor':'middle',class:'alab'},g,o.xlab);
  if(o.ylab)el('text',{x:14,y:(f.y0+f.y1)/2,'text-anchor':'middle',class:'alab',transform:'rotate(-90 14 '+(f.y0+f.y1)/2+')'},g,o.ylab);
  return f;
}
function tip(e,html){e.setAttribute('data-tip',html);e.setAttribute('tabindex','0');e.classList.add('mark');return e;}
// the strategies of a plot (meta names/colors), with their legend
function strategiesOf(meta){var s=[];(meta.names||[]).forEach(function(n,i){s.push({name:n,color:colorOf((meta.colors||[])[i]),ref:(meta.isref||[])[i]});});return s;}
function legend(box,strats,extra){var d=document.createElement('div');d.className='clegend';
  strats.forEach(function(s){var b=document.createElement('button');b.type='button';b.className='lg'+(hidden(s.name)?' off':'');b.setAttribute('data-strategy',s.name);
    b.innerHTML='<span class="sw" style="background:'+s.color+'"></span>'+fbEsc(s.name)+(s.ref?' <span class="muted">(reference)</span>':'');
    b.title='hide or show '+s.name+' in every chart and table';b.addEventListener('click',function(){toggleStrategy(s.name);});d.appendChild(b);});
  (extra||[]).forEach(function(x){var sp=document.createElement('span');sp.className='lg static';sp.innerHTML=x;d.appendChild(sp);});
  box.appendChild(d);}
var MARKERS=['circle','square','triangle','diamond','cross','star'];
function marker(g,kind,x,y,r,color,filled){var e;
  if(kind==='square')e=el('rect',{x:x-r*.85,y:y-r*.85,width:r*1.7,height:r*1.7},g);
  else if(kind==='triangle')e=el('path',{d:'M'+x+' '+(y-r*1.1)+'L'+(x+r)+' '+(y+r*.8)+'L'+(x-r)+' '+(y+r*.8)+'Z'},g);
  else if(kind==='diamond')e=el('path',{d:'M'+x+' '+(y-r*1.2)+'L'+(x+r)+' '+y+'L'+x+' '+(y+r*1.2)+'L'+(x-r)+' '+y+'Z'},g);
  else if(kind==='cross'){e=el('path',{d:'M'+(x-r)+' '+(y-r)+'L'+(x+r)+' '+(y+r)+'M'+(x-r)+' '+(y+r)+'L'+(x+r)+' '+(y-r),'stroke-width':2.6},g);e.setAttribute('stroke',color);e.setAttribute('fill','none');e.setAttribute('pointer-events','stroke');return e;}
  else if(kind==='star')e=el('path',{d:'M'+x+' '+(y-r*1.2)+'L'+(x+r*.35)+' '+(y-r*.35)+'L'+(x+r*1.2)+' '+y+'L'+(x+r*.35)+' '+(y+r*.35)+'L'+x+' '+(y+r*1.2)+'L'+(x-r*.35)+' '+(y+r*.35)+'L'+(x-r*1.2)+' '+y+'L'+(x-r*.35)+' '+(y-r*.35)+'Z'},g);
  else e=el('circle',{cx:x,cy:y,r:r},g);
  e.setAttribute('fill',filled===false?'#fff':color);e.setAttribute('stroke',filled===false?color:'#fff');e.setAttribute('stroke-width',filled===false?2:1);return e;}

// dots: a row per workload, a dot per strategy (overhead, mincap)
function drawDots(box,p){var m=p.meta,S=strategiesOf(m),rows=(p.blocks[0]||{rows:[]}).rows,fails=(p.blocks[1]||{rows:[]}).rows.filter(function(r){return r[0]>0;}),lims=(p.blocks[2]||{rows:[]}).rows.filter(function(r){return r[0]>0;});
  var vis=S.map(function(s){return !hidden(s.name);}),lo=1,hi=1;
  rows.forEach(function(r){S.forEach(function(s,i){var v=r[i+1];if(vis[i]&&typeof v==='number'){lo=Math.min(lo,v);hi=Math.max(hi,v);}});});
  lims.forEach(function(r){if(typeof r[1]==='number')hi=Math.max(hi,r[1]);});
  var span=(hi-lo)||0.1,xmin=lo-span*0.04,failx=hi+span*0.12,xmax=hi+span*(fails.length?0.2:0.06);
  var dotFmt=tickFmt(niceTicks(xmin,xmax,8));
  var rowH=Math.max(34,12+S.length*5),H=rowH*rows.length+70,lw=Math.min(300,12+8*Math.max.apply(null,rows.map(function(r){return String(r[0]).length;}).concat([10])));
  var f=frame(box,{h:H,m:{l:lw,r:24,t:12,b:52},xmin:xmin,xmax:xmax,ymin:0,ymax:rows.length,yticks:false,xlab:m.xlab||'',xfmt:function(v){return v>xmax-span*0.09&&fails.length?'':dotFmt(v);}});
  var g=el('g',{},f.svg);
  if(fails.length){el('line',{x1:f.sx(failx),x2:f.sx(failx),y1:f.y1,y2:f.y0,class:'failcol'},g);el('text',{x:f.sx(failx),y:f.y0+17,'text-anchor':'middle',class:'tick fail'},g,'failed');}
  rows.forEach(function(r,ri){var yc=f.y1+(ri+0.5)*(f.y0-f.y1)/rows.length;
    el('text',{x:f.x0-8,y:yc+4,'text-anchor':'end',class:'rowlab'},g,String(r[0]));
    if(ri)el('line',{x1:f.x0,x2:f.x1,y1:f.y1+ri*(f.y0-f.y1)/rows.length,y2:f.y1+ri*(f.y0-f.y1)/rows.length,class:'rowsep'},g);
    lims.forEach(function(L){if(L[0]===ri+1&&typeof L[1]==='number'){var x=f.sx(L[1]);tip(el('line',{x1:x,x2:x,y1:yc-rowH*0.42,y2:yc+rowH*0.42,class:'limit'},g),fbEsc(String(r[0]))+': the limit, '+fmtX(L[1]));}});
    S.forEach(function(s,i){if(!vis[i])return;var off=(i-(S.length-1)/2)*Math.min(5,rowH*0.8/S.length),v=r[i+1];
      if(typeof v==='number'){var e=marker(g,MARKERS[i%4],f.sx(v),yc+off,5.5,s.color);tip(e,'<b>'+fbEsc(s.name)+'</b> on '+fbEsc(String(r[0]))+'<br>'+fbEsc(m.xlab?m.xlab.split(' (')[0]:'value')+': <b>'+fmtX(v)+'</b>');e.setAttribute('data-strategy',s.name);}
      fails.forEach(function(F){if(F[0]===ri+1&&F[1]===i+1){var e=marker(g,'cross',f.sx(failx),yc+off,5,s.color);tip(e,'<b>'+fbEsc(s.name)+'</b> on '+fbEsc(String(r[0]))+': <b>did not complete</b> (ran out of memory or failed)');e.setAttribute('data-strategy',s.name);}});});});
  legend(box,S,lims.length?['<span class="sw" style="background:#7b3294"></span>the job\'s limit']:[]);}

// latency: per strategy p50 and p99 (and the mean) with the range over workloads, log y
function drawLatency(box,p){var m=p.meta,rows=(p.blocks[0]||{rows:[]}).rows,S=strategiesOf(m);
  var series=[{c:4,name:'p50 (calls timed alone)',col:'#55a868'},{c:7,name:'p99 (calls timed alone)',col:'#c44e52'}];
  if(m.hasmean)series.unshift({c:1,name:'mean (ns/op, the loop\'s clock)',col:'#4c72b0'});
  var R=rows.filter(function(r){return !hidden(r[0]);}),lo=1e30,hi=0;
  R.forEach(function(r){series.forEach(function(s){[r[s.c],r[s.c+1],r[s.c+2]].forEach(function(v){if(typeof v==='number'&&v>0){lo=Math.min(lo,v);hi=Math.max(hi,v);}});});});
  if(!(hi>0)){lo=1;hi=10;}
  var f=frame(box,{h:400,m:{l:70,r:20,t:14,b:78},xmin:0,xmax:Math.max(1,R.length),xticks:false,ylog:true,ymin:lo/1.6,ymax:hi*1.6,ylab:'ns per call (log scale)'});
  var g=el('g',{},f.svg),bw=(f.x1-f.x0)/Math.max(1,R.length),w=Math.min(26,bw*0.8/series.length);
  R.forEach(function(r,i){var cx=f.x0+(i+0.5)*bw,si=S.findIndex(function(s){return s.name===r[0];}),col=si>=0?S[si].color:'#333';
    var t=el('text',{x:cx,y:f.y0+16,'text-anchor':'end',class:'tick',transform:'rotate(-30 '+cx+' '+(f.y0+16)+')'},g,String(r[0]));t.setAttribute('fill',col);
    series.forEach(function(s,k){var v=r[s.c];if(typeof v!=='number'||v<=0)return;var x=cx+(k-(series.length-1)/2)*w;
      var b=el('rect',{x:x-w/2+1,y:f.sy(v),width:w-2,height:Math.max(1,f.y0-f.sy(v)),fill:s.col,class:'bar'},g);
      if(typeof r[s.c+1]==='number'&&typeof r[s.c+2]==='number'&&r[s.c+1]>0)el('path',{d:'M'+x+' '+f.sy(r[s.c+1])+'V'+f.sy(r[s.c+2])+'M'+(x-4)+' '+f.sy(r[s.c+1])+'h8M'+(x-4)+' '+f.sy(r[s.c+2])+'h8',class:'whisker'},g);
      tip(b,'<b>'+fbEsc(r[0])+'</b>: '+fbEsc(s.name)+' <b>'+fmtNum(v)+' ns</b><br>fastest to slowest workload: '+fmtNum(r[s.c+1])+'-'+fmtNum(r[s.c+2])+' ns ('+r[10]+' workloads)');b.setAttribute('data-strategy',r[0]);});});
  legend(box,S,series.map(function(s){return '<span class="sw" style="background:'+s.col+'"></span>'+fbEsc(s.name);}));}

// tradeoff: overhead against driver time per 1000 calls, colour = strategy, shape = workload
function drawTradeoff(box,p){var m=p.meta,S=strategiesOf(m),W=m.wnames||[],pts=[];
  p.blocks.forEach(function(b){var si=S.findIndex(function(s){return s.name===b.title;});if(si<0||hidden(S[si].name))return;b.rows.forEach(function(r){if(typeof r[0]==='number'&&r[0]>0&&typeof r[1]==='number')pts.push({s:si,x:r[0],y:r[1],w:String(r[2]),wi:r[3]});});});
  var xmin=1e30,xmax=0,ymin=1,ymax=1;pts.forEach(function(q){xmin=Math.min(xmin,q.x);xmax=Math.max(xmax,q.x);ymin=Math.min(ymin,q.y);ymax=Math.max(ymax,q.y);});
  if(!pts.length){xmin=1e3;xmax=1e6;}
  var f=frame(box,{h:460,xlog:true,xmin:xmin/2,xmax:xmax*2,ymin:ymin-(ymax-ymin)*0.05-0.005,ymax:ymax+(ymax-ymin)*0.08+0.01,xfmt:fmtNs,
    xlab:'time in device calls per 1000 alloc/free calls (log scale; modeled on sim, measured on a GPU)',ylab:'peak reserved / peak requested'});
  var g=el('g',{},f.svg);if(f.sy(1)<=f.y0)el('line',{x1:f.x0,x2:f.x1,y1:f.sy(1),y2:f.sy(1),class:'one'},g);
  pts.forEach(function(q){var e=marker(g,MARKERS[((q.wi||1)-1)%6],f.sx(q.x),f.sy(q.y),6,S[q.s].color);e.setAttribute('data-strategy',S[q.s].name);
    tip(e,'<b>'+fbEsc(S[q.s].name)+'</b> on '+fbEsc(q.w)+'<br>overhead <b>'+fmtX(q.y)+'</b><br>driver time <b>'+fmtNs(q.x)+'</b> per 1000 calls');});
  legend(box,S,W.map(function(w,j){return '<svg width="14" height="14" viewBox="-7 -7 14 14" style="vertical-align:-2px;margin-right:4px">'+markerSvg(MARKERS[j%6])+'</svg>'+fbEsc(w);}));}
function markerSvg(k){var t=document.createElementNS(NS,'g');marker(t,k,0,0,5,'#303030');return t.innerHTML;}

// timeline: reserved over the run per strategy, requested in black, the limit, where a run died
function drawTimeline(box,p){var m=p.meta,S=strategiesOf(m),div=m.div||1,unit=m.unit||'B',xdiv=m.xdiv||1;
  var blocks=p.blocks.map(function(b,i){return {s:i,rows:b.rows};}).filter(function(b){return b.s<S.length;});
  var req=blocks.length?blocks[0].rows:[],ymax=0,xmax=m.xmax||0;
  blocks.forEach(function(b){if(hidden(S[b.s].name))return;b.rows.forEach(function(r){ymax=Math.max(ymax,r[3]||0,r[1]||0);xmax=Math.max(xmax,r[0]||0);});});
  req.forEach(function(r){ymax=Math.max(ymax,r[1]||0);});if(m.cap>0)ymax=Math.max(ymax,m.cap);if(!ymax)ymax=1;if(!xmax)xmax=1;
  var f=frame(box,{h:400,xmin:0,xmax:xmax,xstep:1,ymin:0,ymax:ymax*1.06/div,ylab:unit,xlab:'event',xfmt:function(v){return xdiv>1&&v?(v/xdiv)+(m.xsuffix||''):fmtNum(v);}});
  var g=el('g',{},f.svg);
  function path(rows,col,cls,c){var d='';rows.forEach(function(r,i){if(typeof r[c]!=='number')return;d+=(d?'L':'M')+f.sx(r[0]).toFixed(1)+' '+f.sy(r[c]/div).toFixed(1);});var e=el('path',{d:d,class:cls},g);e.setAttribute('stroke',col);return e;}
  if(m.cap>0){var y=f.sy(m.cap/div);if(m.caphi>m.caplo&&m.caplo>0)el('rect',{x:f.x0,width:f.x1-f.x0,y:f.sy(m.caphi/div),height:Math.max(1,f.sy(m.caplo/div)-f.sy(m.caphi/div)),class:'capband'},g);
    tip(el('line',{x1:f.x0,x2:f.x1,y1:y,y2:y,class:'limit'},g),'the limit the rows ran under: <b>'+fbBytes(m.cap)+'</b>'+(m.captext?'<br>'+fbEsc(m.captext):''));}
  blocks.forEach(function(b){if(!hidden(S[b.s].name)){var e=path(b.rows,S[b.s].color,'tline',3);e.setAttribute('data-strategy',S[b.s].name);}});
  path(req,'#111','tline req',1);   // on top: a strategy that reserves just what is asked lies under it
  (m.oomev||[]).forEach(function(ev,i){if(ev>=0&&i<S.length&&!hidden(S[i].name)){var e=marker(g,'cross',f.sx(ev),f.sy((m.oomres[i]||0)/div),6,S[i].color);tip(e,'<b>'+fbEsc(S[i].name)+'</b> ran out of memory at event '+ev+' with '+fbBytes(m.oomres[i])+' reserved');}});
  var cur=el('line',{y1:f.y1,y2:f.y0,class:'cursor',visibility:'hidden'},g);
  var hit=el('rect',{x:f.x0,y:f.y1,width:f.x1-f.x0,height:f.y0-f.y1,fill:'transparent',class:'hover'},f.svg);
  function near(rows,x){var lo=0,hi=rows.length-1;if(hi<0)return null;while(lo<hi){var mid=(lo+hi)>>1;if(rows[mid][0]<x)lo=mid+1;else hi=mid;}if(lo>0&&Math.abs(rows[lo-1][0]-x)<Math.abs(rows[lo][0]-x))lo--;return rows[lo];}
  hit.addEventListener('mousemove',function(e){var pt=f.svg.createSVGPoint();pt.x=e.clientX;pt.y=e.clientY;var q=pt.matrixTransform(f.svg.getScreenCTM().inverse());
    var x=(q.x-f.x0)/(f.x1-f.x0)*xmax,r0=near(req,x);if(!r0)return;cur.setAttribute('x1',f.sx(r0[0]));cur.setAttribute('x2',f.sx(r0[0]));cur.setAttribute('visibility','visible');
    var h='<b>event '+r0[0]+'</b><br><span class="sw" style="background:#111"></span>requested <b>'+fbBytes(r0[1])+'</b>';
    blocks.forEach(function(b){if(hidden(S[b.s].name))return;var r=near(b.rows,x);if(r)h+='<br><span class="sw" style="background:'+S[b.s].color+'"></span>'+fbEsc(S[b.s].name)+': reserved <b>'+fbBytes(r[3])+'</b>, allocated '+fbBytes(r[2]);});
    fbTip(e,h);});
  hit.addEventListener('mouseleave',function(){cur.setAttribute('visibility','hidden');fbHide();});
  legend(box,S,['<span class="sw" style="background:#111"></span>requested (the program\'s live bytes, dashed)','lines: reserved from the device'+(m.cap>0?'; dashed purple: the limit':'')]);}

// capsweep: peak reserved of the runs that completed at each cap, and the caps that failed
function drawCapsweep(box,p){var m=p.meta,S=strategiesOf(m),div=m.div||1,unit=m.unit||'B',pts=[],xmin=m.xmin||1,xmax=m.xmax||2,ymin=1e300,ymax=0;
  p.blocks.forEach(function(b,bi){if(bi%2)return;var si=bi/2;if(si>=S.length||hidden(S[si].name))return;b.rows.forEach(function(r){pts.push({s:si,x:r[0],y:r[1],ok:r[2]===1});if(r[2]===1){ymin=Math.min(ymin,r[1]);ymax=Math.max(ymax,r[1]);}});});
  if(!(ymax>0)){ymin=m.ymin||0;ymax=m.ymax||1;}
  if(m.preq>0)ymin=Math.min(ymin,m.preq);
  var pad=(ymax-ymin)*0.08||ymax*0.05,ylo=Math.max(0,ymin-pad)/div,yhi=(ymax+pad)/div,band=(yhi-ylo)*0.12;
  var f=frame(box,{h:420,m:{l:70,r:20,t:16,b:52},xmin:xmin-(xmax-xmin)*0.04,xmax:xmax+(xmax-xmin)*0.04,ymin:ylo-band,ymax:yhi,ytickmin:ylo,xfmt:fmtX,xlab:'cap / peak requested',ylab:'peak reserved ('+unit+'), runs that completed'});
  var g=el('g',{},f.svg),yf=f.sy(ylo-band*0.55);
  el('text',{x:f.x1-4,y:yf-9,'text-anchor':'end',class:'tick fail'},g,'× did not complete at this cap');
  if(m.preq>0)el('line',{x1:f.x0,x2:f.x1,y1:f.sy(m.preq/div),y2:f.sy(m.preq/div),class:'one'},g);
  S.forEach(function(s,si){if(hidden(s.name))return;var d='';pts.filter(function(q){return q.s===si&&q.ok;}).sort(function(a,b){return a.x-b.x;}).forEach(function(q){d+=(d?'L':'M')+f.sx(q.x)+' '+f.sy(q.y/div);});if(d){var e=el('path',{d:d,class:'tline thin'},g);e.setAttribute('stroke',s.color);}});
  pts.forEach(function(q){var s=S[q.s],e=q.ok?marker(g,MARKERS[q.s%4],f.sx(q.x),f.sy(q.y/div),5,s.color):marker(g,'cross',f.sx(q.x)+(q.s-(S.length-1)/2)*3,yf,4.5,s.color);e.setAttribute('data-strategy',s.name);
    tip(e,'<b>'+fbEsc(s.name)+'</b> at a cap of <b>'+fmtX(q.x)+'</b> peak requested: '+(q.ok?'completed, peak reserved <b>'+fbBytes(q.y)+'</b>':'<b>did not complete</b>'));});
  legend(box,S,m.preq>0?['dashed: peak requested '+fbBytes(m.preq)]:[]);}

var DRAW={dots:drawDots,latency:drawLatency,tradeoff:drawTradeoff,timeline:drawTimeline,capsweep:drawCapsweep};
function drawAll(){document.querySelectorAll('figure.chart').forEach(function(fig){var p=FB_PLOTS.filter(function(q){return q.name===fig.dataset.plot;})[0],box=fig.querySelector('.chartbody');
  box.innerHTML='';if(!p||!DRAW[p.script]){box.textContent='(no data for this plot)';return;}
  try{DRAW[p.script](box,p);}catch(err){box.textContent='(this plot could not be drawn: '+err.message+')';console.error(err);}});}
function toggleStrategy(name){FB_HIDDEN[name]=!FB_HIDDEN[name];syncStrategies();}
function syncStrategies(){document.querySelectorAll('#strategies input').forEach(function(c){c.checked=!hidden(c.value);});
  document.querySelectorAll('tr[data-strategy]').forEach(function(tr){tr.classList.toggle('hid',hidden(tr.dataset.strategy));});drawAll();}
// tables: a row whose first cell names a strategy follows that strategy's switch
function markRows(){var names=FB_STRATS.map(function(s){return s.name;}).sort(function(a,b){return b.length-a.length;});
  document.querySelectorAll('.report table tbody tr').forEach(function(tr){var c=tr.cells[0];if(!c)return;var t=c.textContent.trim();
    for(var i=0;i<names.length;i++){var n=names[i];if(t===n||t.indexOf(n+' (')===0||t.indexOf(n+' ')===0){tr.setAttribute('data-strategy',n);break;}}});}
(function(){var bar=document.getElementById('strategies');FB_STRATS.forEach(function(s){var l=document.createElement('label');
  l.innerHTML='<input type="checkbox" checked value="'+fbEsc(s.name)+'"><span class="sw" style="background:'+colorOf(s.color)+'"></span>'+fbEsc(s.name);
  l.querySelector('input').addEventListener('change',function(e){FB_HIDDEN[s.name]=!e.target.checked;syncStrategies();});bar.appendChild(l);});
  document.getElementById('allon').addEventListener('click',function(){FB_HIDDEN={};syncStrategies();});
  markRows();drawAll();
  document.addEventListener('mousemove',function(e){var t=e.target.closest&&e.target.closest('[data-tip]');if(t)fbTip(e,t.getAttribute('data-tip'));else if(!(e.target.closest&&e.target.closest('rect.hover')))fbHide();});
  document.addEventListener('focusin',function(e){var t=e.target.closest&&e.target.closest('[data-tip]');if(t){var r=t.getBoundingClientRect();fbTip({clientX:r.right,clientY:r.bottom},t.getAttribute('data-tip'));}});})();
